package loadgen

import (
	"context"
	"net"
	"sync"

	"github.com/sluicehq/sluice/wasm/client"
)

// killSwitch holds a client's current network connection, so that a run
// can drop it abruptly (Killer).
type killSwitch struct {
	mu sync.Mutex // guards nc
	nc net.Conn   // the connection last dialed; nil once killed
}

// watch wraps a dial function so that each connection it opens becomes
// the one kill drops.
func (k *killSwitch) watch(dial client.NetDialFunc) client.NetDialFunc {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err == nil {
			k.mu.Lock()
			k.nc = nc
			k.mu.Unlock()
		}
		return nc, err
	}
}

// kill resets the connection: with no lingering, closing a TCP socket
// sends a reset, and the client's reader fails at once. The peer sees
// what a crashed client or a cut link gives it: no close frame.
func (k *killSwitch) kill() bool {
	k.mu.Lock()
	nc := k.nc
	k.nc = nil
	k.mu.Unlock()
	if nc == nil {
		return false
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // fails only on a closed socket, which Close reports
	}
	return nc.Close() == nil
}
