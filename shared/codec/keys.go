package codec

// shellSortedKeys appends the keys of m to buf and sorts them with a Shell
// sort, in the order of SortedKeys. It is SortedKeys in the browser
// (keys_js.go); it builds everywhere so that the tests check it natively
// against the standard library's sort.
func shellSortedKeys(buf []string, m map[string]any) []string {
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
