//go:build !js

package loadgen

import "github.com/sluicehq/sluice/wasm/client"

// netDial is the client's dial hook: the driver's SpreadDialer.
func (d *RTM) netDial() client.NetDialFunc { return d.dialer.DialContext }
