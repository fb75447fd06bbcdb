package loadgen

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultSources is SpreadDialer.Sources' default.
const DefaultSources = 16

// SpreadDialer dials TCP like net/http's default dialer, except that a
// connection to an IPv4 loopback address leaves from one of several
// loopback source addresses (127.0.0.1, 127.0.0.2, ...) in turn.
//
// Why a load generator cares: Linux picks a connection's source port by
// scanning the ephemeral range from where it last stopped, first through
// the ports of one parity. Once that half of the range is taken by
// connections to the same server (about 14,000 with the default range of
// 32768-60999), every further connect scans all of it: about 1ms of CPU
// per connection instead of 40µs, charged to the generator, which shares
// the machine with the server. Each source address has its own ports, so
// 16 addresses keep the ramp cheap up to about 220,000 connections.
//
// Other destinations, and systems other than Linux (where only 127.0.0.1
// may be configured), are dialed as usual. The zero value is ready to use.
type SpreadDialer struct {
	// Sources is how many loopback source addresses take turns; default
	// DefaultSources.
	Sources int

	next atomic.Uint32 // connections dialed; any goroutine may dial
}

// DialContext dials like net.Dialer.DialContext; it fits
// http.Transport.DialContext.
func (d *SpreadDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	nd := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: d.control}
	return nd.DialContext(ctx, network, address)
}

// control binds a socket about to connect to an IPv4 loopback address to
// the next source address. Should that fail, the connection leaves from
// the default address as usual.
func (d *SpreadDialer) control(_ context.Context, network, address string, c syscall.RawConn) error {
	if network != "tcp4" {
		return nil
	}
	dst, err := netip.ParseAddrPort(address)
	if err != nil || !dst.Addr().IsLoopback() {
		return nil
	}
	n := d.Sources
	if n <= 0 {
		n = DefaultSources
	}
	i := (d.next.Add(1) - 1) % uint32(min(n, 254))
	src := [4]byte{127, 0, 0, byte(1 + i)}
	_ = c.Control(func(fd uintptr) { _ = bindSource(fd, src) })
	return nil
}
