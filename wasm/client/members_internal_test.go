package client

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestShellSortMembers checks the browser's sort of members against the
// standard library's, on sizes around the Shell sort's gap boundaries.
func TestShellSortMembers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 31, 64, 100, 1000} {
		ms := make([]Member, n)
		for i, k := range r.Perm(n) {
			ms[i] = Member{UserID: "u" + strconv.Itoa(k), Connections: i}
		}
		want := slices.Clone(ms)
		slices.SortFunc(want, func(a, b Member) int { return strings.Compare(a.UserID, b.UserID) })
		shellSortMembers(ms)
		for i := range ms {
			if ms[i].UserID != want[i].UserID || ms[i].Connections != want[i].Connections {
				t.Fatalf("%d members: at %d got %+v, want %+v", n, i, ms[i], want[i])
			}
		}
	}
}
