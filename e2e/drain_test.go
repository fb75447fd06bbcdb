package e2e

// Draining: an edge told to stop (Shutdown, what SIGTERM calls) reports
// not-ready, closes its connections with 1001 "going away", and the Go
// client moves to another edge by itself.

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// balancer is a TCP load balancer in front of edges, as in production: it
// sends each new connection to the first backend whose /readyz answers
// 200, so a draining edge gets no new clients.
type balancer struct {
	ln       net.Listener
	backends []string // host:port of each edge
	counts   []atomic.Int32
	wg       sync.WaitGroup

	mu    sync.Mutex // guards conns
	conns []net.Conn
}

// newBalancer balances over backends until the test ends.
func newBalancer(t *testing.T, backends ...string) *balancer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{ln: ln, backends: backends, counts: make([]atomic.Int32, len(backends))}
	b.wg.Add(1)
	go b.serve()
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		for _, c := range b.conns {
			c.Close()
		}
		b.mu.Unlock()
		b.wg.Wait()
	})
	return b
}

// url is the balancer's ws:// endpoint.
func (b *balancer) url() string { return "ws://" + b.ln.Addr().String() }

// served returns how many connections went to backend i.
func (b *balancer) served(i int) int { return int(b.counts[i].Load()) }

func (b *balancer) serve() {
	defer b.wg.Done()
	for {
		in, err := b.ln.Accept()
		if err != nil {
			return
		}
		i := b.pick()
		if i < 0 {
			in.Close() // no edge is ready: the client retries
			continue
		}
		out, err := net.Dial("tcp", b.backends[i])
		if err != nil {
			in.Close()
			continue
		}
		b.counts[i].Add(1)
		b.mu.Lock()
		b.conns = append(b.conns, in, out)
		b.mu.Unlock()
		b.wg.Add(2)
		go b.pipe(in, out)
		go b.pipe(out, in)
	}
}

// pick returns the first ready backend, or -1.
func (b *balancer) pick() int {
	hc := &http.Client{Timeout: time.Second}
	for i, addr := range b.backends {
		resp, err := hc.Get("http://" + addr + "/readyz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return i
		}
	}
	return -1
}

func (b *balancer) pipe(dst, src net.Conn) {
	defer b.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// TestDrainMovesClientToAnotherEdge runs two edges behind a balancer. The
// client's edge is told to stop: it must report not-ready (for its drain
// delay, still serving), close the client with 1001 and exit within its
// delay and deadline, and the client must
// reconnect to the other edge and re-establish its subscription there by
// itself, receiving what is published on the new edge. The new edge does
// not have the old one's history (sharing it is the cluster's job): the
// subscription, made with fast_forward, resumes with a fast_forward notice
// instead of failing with expired_position.
func TestDrainMovesClientToAnotherEdge(t *testing.T) {
	t.Parallel()
	const delay, grace = time.Second, 5 * time.Second
	const cfg = "limits:\n  shutdown_timeout: 5s\n  drain_delay: 1s\n"
	a, b := startCmdEdge(t, cfg), startCmdEdge(t, cfg)
	lb := newBalancer(t, a.Addr, b.Addr)

	var states stateLog
	var got inbox
	c := dial(t, lb.url(), client.Options{AppKey: a.appkey, OnState: states.on})
	ctx := ctxFor(t)
	subErr := make(chan error, 1)
	infos := make(chan rtm.SubscriptionInfo, 1)
	sub, err := c.Subscribe(ctx, "chat", &client.SubscribeOptions{
		FastForward: true,
		OnError:     func(err error) { subErr <- err },
		OnInfo:      func(info rtm.SubscriptionInfo) { infos <- info },
	}, got.handle)
	if err != nil {
		t.Fatal(err)
	}
	if lb.served(0) != 1 || lb.served(1) != 0 {
		t.Fatalf("connections to edges a, b: %d, %d; want the client on a", lb.served(0), lb.served(1))
	}
	onA := dial(t, a.url, client.Options{AppKey: a.appkey})
	if _, err := onA.Publish(ctx, "chat", "on a"); err != nil {
		t.Fatal(err)
	}
	got.expect(t, []string{"on a"})

	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, delay+grace+5*time.Second)
	defer cancel()
	if err := a.Shutdown(sctx); err != nil {
		t.Errorf("edge a's Shutdown: %v, want nil", err)
	}
	if d := time.Since(start); d > delay+grace {
		t.Errorf("edge a took %v to drain, more than its %v delay and %v deadline", d, delay, grace)
	}
	poll.Until(t, "the client to reconnect through the balancer to edge b", func() bool {
		return lb.served(1) >= 1 && c.State() == client.Connected
	})
	onB := dial(t, b.url, client.Options{AppKey: b.appkey})
	// Publish until the resubscribed handler sees it: the client may still
	// be resubscribing when the first publish lands.
	poll.Until(t, "a message published on edge b", func() bool {
		select {
		case err := <-subErr:
			t.Fatalf("the subscription ended instead of moving to edge b: %v (code %s)", err, codeOf(err))
		default:
		}
		if _, err := onB.Publish(ctx, "chat", "on b"); err != nil {
			t.Fatal(err)
		}
		msgs := got.get()
		return msgs[len(msgs)-1] == "on b"
	})
	if info := poll.Recv(t, "the fast_forward notice", infos); info.Info != rtm.InfoFastForward || info.SubscriptionID != "chat" {
		t.Errorf("OnInfo(%+v), want fast_forward for chat", info)
	}
	select {
	case <-sub.Done():
		t.Fatalf("subscription done: %v", sub.Err())
	default:
	}
	if ss := states.get(); !slices.Contains(ss, client.Disconnected) {
		t.Errorf("states %v: the client never noticed edge a going away", ss)
	}
}
