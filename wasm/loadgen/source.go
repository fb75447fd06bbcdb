package loadgen

import (
	"context"
	"net"
	"sync/atomic"
)

// LoopbackSources is how many source addresses LoopbackDialer spreads
// connections over.
const LoopbackSources = 16

// LoopbackDialer dials like a net.Dialer, except that connections to a
// loopback IPv4 address leave from one of LoopbackSources source addresses
// (127.0.0.2 and up) in turn. Linux gives connect() only the even half of
// the ephemeral port range, about 14,000 ports per source address, and
// once they are taken every connect scans the whole range: thousands of
// connections from 127.0.0.1 alone make the ramp crawl. Other addresses
// are dialed as they are.
type LoopbackDialer struct {
	n atomic.Uint32
}

// DialContext implements the dial hooks of the Sluice client
// (client.Options.NetDial) and of other clients.
func (d *LoopbackDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nd.DialContext(ctx, network, addr)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() && ip.To4() != nil {
		i := d.n.Add(1) % LoopbackSources
		nd.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))}
	}
	return nd.DialContext(ctx, network, addr)
}
