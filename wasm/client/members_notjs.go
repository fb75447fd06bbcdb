//go:build !js

package client

import (
	"slices"
	"strings"
)

// sortMembers sorts members by user id, in O(n log n) for a channel of
// any size; the browser build uses a Shell sort (members.go).
func sortMembers(ms []Member) {
	slices.SortFunc(ms, func(a, b Member) int { return strings.Compare(a.UserID, b.UserID) })
}
