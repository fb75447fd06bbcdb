package wire

// sortKeys is SortedKeys in the browser, where the size of sluice.wasm
// matters more than the time a huge map takes to sort.
func sortKeys(buf []string, m map[string]any) []string { return SortedKeys(buf, m) }
