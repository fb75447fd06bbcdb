//go:build !js

package codec

import "slices"

// SortedKeys appends the keys of m to buf in increasing byte order and
// returns it. Encoders write maps in this order so a value always encodes to
// the same bytes; a caller passing a stack array as buf avoids allocating for
// small maps. In the browser it is a Shell sort instead (keys_js.go), giving
// the same order; natively it stays O(n log n) on the largest map a client
// can publish.
func SortedKeys(buf []string, m map[string]any) []string {
	for k := range m {
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf
}
