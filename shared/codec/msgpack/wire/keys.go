package wire

// SortedKeys appends m's keys to buf in increasing byte order, the order
// every Sluice codec writes maps in, and returns it. It is a Shell sort
// rather than the standard library's, whose generic pdqsort would add
// about 6 KB gzipped to sluice.wasm; message maps are small. Natively,
// AppendValue sorts with codec.SortedKeys instead (keys_notjs.go), which
// stays O(n log n) on the largest map a client can publish.
func SortedKeys(buf []string, m map[string]any) []string {
	for k := range m {
		buf = append(buf, k)
	}
	for gap := len(buf) / 2; gap > 0; gap /= 2 {
		for i := gap; i < len(buf); i++ {
			for j := i; j >= gap && buf[j-gap] > buf[j]; j -= gap {
				buf[j-gap], buf[j] = buf[j], buf[j-gap]
			}
		}
	}
	return buf
}
