//go:build js

package loadgen

import "github.com/sluicehq/sluice/wasm/client"

// netDial is nil in browsers, which open connections themselves.
func netDial() client.NetDialFunc { return nil }
