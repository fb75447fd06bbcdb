package e2e

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// proxy forwards TCP connections to an edge so a test can fail the network
// under a client: cut the connections, refuse new ones, hold the edge's
// bytes back (lost), or stall them (delivered later, as a congested
// network would).
type proxy struct {
	ln net.Listener
	// readBuffer, when positive, is the SO_RCVBUF of the sockets to the
	// edge, so that a stall backs up into the edge after a few kilobytes.
	readBuffer int
	n          atomic.Int32 // connections forwarded
	refusedN   atomic.Int32 // connections refused
	wg         sync.WaitGroup

	mu       sync.Mutex // guards the fields below
	target   string     // host:port of the edge; retarget changes it
	conns    []net.Conn
	holding  bool
	heldN    int           // bytes from the edge dropped while holding
	refusing bool          // new connections are closed at once
	gate     chan struct{} // non-nil while stalled; closed by unstall
}

// newProxy forwards a loopback port to target (host:port) until the test
// ends.
func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	return startProxy(t, &proxy{target: target})
}

// newStallingProxy is newProxy with small buffers toward the edge, for
// tests that stall the edge's writer.
func newStallingProxy(t *testing.T, target string) *proxy {
	t.Helper()
	return startProxy(t, &proxy{target: target, readBuffer: 4 << 10})
}

func startProxy(t *testing.T, p *proxy) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

// url is the ws:// endpoint of the proxy.
func (p *proxy) url() string     { return "ws://" + p.ln.Addr().String() }
func (p *proxy) accepted() int32 { return p.n.Load() }
func (p *proxy) refused() int32  { return p.refusedN.Load() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refusing, target := p.refusing, p.target
		p.mu.Unlock()
		if refusing {
			p.refusedN.Add(1)
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", target)
		if err != nil {
			in.Close()
			continue
		}
		if tc, ok := out.(*net.TCPConn); ok && p.readBuffer > 0 {
			_ = tc.SetReadBuffer(p.readBuffer) // without it, stalls take longer to bite
		}
		p.n.Add(1)
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(out, in, false)
		go p.pipe(in, out, true)
	}
}

// pipe copies src to dst. From the edge, data is dropped while holding,
// and not read at all while stalled.
func (p *proxy) pipe(dst, src net.Conn, fromEdge bool) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		if fromEdge {
			p.waitUnstalled()
		}
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			hold := fromEdge && p.holding
			if hold {
				p.heldN += n
			}
			p.mu.Unlock()
			if !hold {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil { // io.EOF or a cut
			return
		}
	}
}

// waitUnstalled returns once the proxy is not stalled.
func (p *proxy) waitUnstalled() {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	if g != nil {
		<-g
	}
}

// cut closes every proxied connection, as a network failure would; new
// ones are accepted (unless refusing), and a hold or stall ends.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.holding = false
	p.unstallLocked()
}

// retarget sends new connections to another edge (host:port), as a
// restarted edge on another port; the open ones stay where they are.
func (p *proxy) retarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

// refuse makes the proxy close new connections at once (on), or forward
// them again (off).
func (p *proxy) refuse(on bool) {
	p.mu.Lock()
	p.refusing = on
	p.mu.Unlock()
}

// hold drops what the edge sends (the stream is unusable afterwards),
// until cut.
func (p *proxy) hold() {
	p.mu.Lock()
	p.holding = true
	p.mu.Unlock()
}

// held returns how many bytes from the edge were held back.
func (p *proxy) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.heldN
}

// stall stops reading from the edge: its bytes wait in the kernel buffers,
// then the edge's writes block, until unstall.
func (p *proxy) stall() {
	p.mu.Lock()
	if p.gate == nil {
		p.gate = make(chan struct{})
	}
	p.mu.Unlock()
}

// unstall forwards the edge's bytes again.
func (p *proxy) unstall() {
	p.mu.Lock()
	p.unstallLocked()
	p.mu.Unlock()
}

func (p *proxy) unstallLocked() {
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}
