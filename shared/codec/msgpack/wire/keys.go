package wire

import "github.com/sluicehq/sluice/shared/codec"

// SortedKeys appends m's keys to buf in increasing byte order, the order
// every Sluice codec writes maps in, and returns it. It is
// codec.SortedKeys, which in the browser is a Shell sort rather than the
// standard library's (whose generic pdqsort would add about 6 KB gzipped
// to sluice.wasm), and natively stays O(n log n) on the largest map a
// client can publish.
func SortedKeys(buf []string, m map[string]any) []string { return codec.SortedKeys(buf, m) }
