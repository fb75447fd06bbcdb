package client

// shellSortMembers sorts members by user id with a Shell sort. It is
// sortMembers in the browser (members_js.go), where the standard
// library's generic pdqsort, instantiated for Member, would add some 6 KB
// gzipped to sluice.wasm; it builds everywhere so that the tests check it
// natively against slices.SortFunc. User ids are unique (they key the
// member maps), so the order is the same as the native one.
func shellSortMembers(ms []Member) {
	for gap := len(ms) / 2; gap > 0; gap /= 2 {
		for i := gap; i < len(ms); i++ {
			for j := i; j >= gap && ms[j-gap].UserID > ms[j].UserID; j -= gap {
				ms[j-gap], ms[j] = ms[j], ms[j-gap]
			}
		}
	}
}
