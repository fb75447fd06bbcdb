package loadgen

import "github.com/sluicehq/sluice/wasm/client"

// spread is the dialer of every RTM driver in the process, so that their
// connections take turns over the source addresses.
var spread SpreadDialer

// netDial is the client's dial hook: the shared SpreadDialer.
func netDial() client.NetDialFunc { return spread.DialContext }
