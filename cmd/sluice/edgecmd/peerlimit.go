package edgecmd

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"sync"

	"github.com/sluicehq/sluice/edge/server"
)

// defaultConnectionsPerIP is limits.connections_per_ip's default.
const defaultConnectionsPerIP = 1000

// peerLimit bounds the connections open from one source address, on all
// the edge's listeners together: each holds a descriptor, and one client
// holding thousands of idle keep-alive connections must not take every
// descriptor the edge has. It counts at accept, below TLS, and uncounts
// when the connection closes, also after a WebSocket upgrade hijacked it.
// A connection past the limit is not dropped at accept (a TLS client
// would see only a reset): it is marked, and its first request is
// answered with 429 and a JSON body, and the connection closed.
type peerLimit struct {
	max int // most connections per address; 0: no limit
	// refuse answers a request past the limit (the RTM server's, so that
	// a page of an allowed origin can read why with CORS).
	refuse func(w http.ResponseWriter, r *http.Request, status int, code, reason string)

	mu   sync.Mutex         // guards open
	open map[netip.Addr]int // open connections by source address
}

func newPeerLimit(max int, srv *server.Server) *peerLimit {
	if max < 0 {
		max = 0
	}
	return &peerLimit{max: max, refuse: srv.RefuseRequest, open: make(map[netip.Addr]int)}
}

// listener wraps ln so that its connections are counted.
func (p *peerLimit) listener(ln net.Listener) net.Listener {
	if p.max == 0 {
		return ln
	}
	return &peerListener{Listener: ln, p: p}
}

// enter counts a connection from addr and reports whether it is within
// the limit.
func (p *peerLimit) enter(addr netip.Addr) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open[addr]++
	return p.open[addr] <= p.max
}

func (p *peerLimit) leave(addr netip.Addr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open[addr]--; p.open[addr] <= 0 {
		delete(p.open, addr)
	}
}

type peerListener struct {
	net.Listener
	p *peerLimit
}

func (l *peerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	pc := &peerConn{Conn: c, p: l.p}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		pc.addr = ap.Addr().Unmap()
		pc.counted = true
		pc.over = !l.p.enter(pc.addr)
	}
	return pc, nil
}

// peerConn is a counted connection.
type peerConn struct {
	net.Conn
	p       *peerLimit
	addr    netip.Addr
	counted bool // false when the address could not be parsed
	over    bool // past the limit when accepted: refused at its first request
	once    sync.Once
}

func (c *peerConn) Close() error {
	c.once.Do(func() {
		if c.counted {
			c.p.leave(c.addr)
		}
	})
	return c.Conn.Close()
}

// CloseWrite lets net/http close gracefully (half-close, then wait) as it
// does with a bare TCP connection.
func (c *peerConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// overLimitKey marks, in a request's context, a connection past the limit.
type overLimitKey struct{}

// connContext is the http.Server's ConnContext: it marks the requests of
// a connection accepted past the limit.
func (p *peerLimit) connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if pc, ok := c.(*peerConn); ok && pc.over {
		return context.WithValue(ctx, overLimitKey{}, true)
	}
	return ctx
}

// handler refuses the requests of a connection past the limit, WebSocket
// upgrades included, with 429 and a JSON body as the edge's other
// refusals have, then closes the connection.
func (p *peerLimit) handler(h http.Handler) http.Handler {
	if p.max == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(overLimitKey{}) == nil {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		p.refuse(w, r, http.StatusTooManyRequests, "too_many_connections", "too many connections open from this address")
	})
}
