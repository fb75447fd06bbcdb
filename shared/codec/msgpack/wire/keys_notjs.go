//go:build !js

package wire

import "github.com/sluicehq/sluice/shared/codec"

// sortKeys is codec.SortedKeys outside the browser: the edge encodes every
// message a client publishes, and a Shell sort's worst case on a map of
// many keys is not one to offer it. Both give the same order.
func sortKeys(buf []string, m map[string]any) []string { return codec.SortedKeys(buf, m) }
