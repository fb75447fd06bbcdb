package codec

// SortedKeys appends the keys of m to buf in increasing byte order and
// returns it, as it does natively (keys_notjs.go). In the browser it is a
// Shell sort rather than the standard library's, whose generic pdqsort
// would add about 6 KB gzipped to sluice.wasm; the maps a browser client
// encodes are small, and there the size of sluice.wasm matters more than
// the time a huge map takes to sort.
func SortedKeys(buf []string, m map[string]any) []string { return shellSortedKeys(buf, m) }
