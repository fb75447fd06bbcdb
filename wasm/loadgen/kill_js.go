//go:build js

package loadgen

import "github.com/sluicehq/sluice/wasm/client"

// killSwitch does nothing in browsers, which own their connections: a
// run with churn there kills nothing.
type killSwitch struct{}

func (killSwitch) watch(dial client.NetDialFunc) client.NetDialFunc { return dial }

func (killSwitch) kill() bool { return false }
