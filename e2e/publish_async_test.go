package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// ack is one PublishAsync outcome.
type ack struct {
	pos rtm.Position
	err error
}

// acks collects PublishAsync outcomes.
type acks struct{ ch chan ack }

func newAcks(capacity int) *acks { return &acks{ch: make(chan ack, capacity)} }

func (a *acks) on(pos rtm.Position, err error) { a.ch <- ack{pos, err} }

func TestPublishAsync(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	p := publisher(t, e.url, "msgpack")
	ctx := ctxFor(t)

	// Chained from the acknowledgments, as a pipelining publisher does:
	// 4 outstanding, 100 in all, sent from this goroutine alone (sending
	// from the ack callbacks too would race the first window: message 3
	// could leave before message 2); every one is acknowledged, in order.
	const total, window = 100, 4
	got := newAcks(total)
	sent := 0
	publishNext := func() {
		sent++
		if err := p.PublishAsync("async", sent, got.on); err != nil {
			t.Fatalf("PublishAsync %d: %v", sent, err)
		}
	}
	for range window {
		publishNext()
	}
	var last rtm.Position
	for i := range total {
		a := poll.Recv(t, fmt.Sprintf("ack %d", i+1), got.ch)
		if a.err != nil {
			t.Fatalf("ack %d: %v", i+1, a.err)
		}
		if i > 0 && last.Compare(a.pos) >= 0 {
			t.Fatalf("ack %d at %v, not after the previous one's %v", i+1, a.pos, last)
		}
		last = a.pos
		if sent < total {
			publishNext()
		}
	}
	var msgs inbox
	if _, err := p.Subscribe(ctx, "async", &client.SubscribeOptions{HistoryCount: total}, msgs.handle); err != nil {
		t.Fatal(err)
	}
	msgs.expect(t, numbers(1, total))

	// The edge's refusal comes to the ack; a local one is returned and
	// the ack is never called.
	reader := dial(t, e.url, client.Options{})
	refused := newAcks(1)
	if err := reader.PublishAsync("async", "denied", refused.on); err != nil {
		t.Fatalf("PublishAsync without the grant: %v, want the refusal in the ack", err)
	}
	if a := poll.Recv(t, "refusal", refused.ch); codeOf(a.err) != rtm.CodeAuthorizationDenied {
		t.Errorf("ack of a refused publish: %v, want authorization_denied", a.err)
	}
	never := func(rtm.Position, error) { t.Error("ack called for a publish that was not sent") }
	if err := p.PublishAsync("", 1, never); !errors.Is(err, rtm.ErrChannelEmpty) {
		t.Errorf("PublishAsync to an empty channel name: %v, want ErrChannelEmpty", err)
	}
	if err := p.PublishAsync("async", 1, nil); err != nil {
		t.Errorf("PublishAsync without ack: %v", err)
	}
	p.Close()
	if err := p.PublishAsync("async", 1, never); !errors.Is(err, client.ErrClosed) {
		t.Errorf("PublishAsync after Close: %v, want ErrClosed", err)
	}
}

// TestPublishAsyncDisconnected: publishes in flight when the connection
// drops get ErrDisconnected, each exactly once.
func TestPublishAsyncDisconnected(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	px := newProxy(t, e.hostPort())
	p := dial(t, px.url(), client.Options{Role: "publisher", RoleSecret: pubSecret})
	px.hold() // the edge's answers are dropped: nothing is acknowledged
	const n = 20
	got := newAcks(n)
	for i := range n {
		if err := p.PublishAsync("cut", i, got.on); err != nil {
			t.Fatalf("PublishAsync %d: %v", i, err)
		}
	}
	poll.Until(t, "the edge's answers to be held", func() bool { return px.held() > 0 })
	px.cut()
	for i := range n {
		if a := poll.Recv(t, fmt.Sprintf("ack %d", i), got.ch); !errors.Is(a.err, client.ErrDisconnected) {
			t.Errorf("ack %d after the cut: %v, want ErrDisconnected", i, a.err)
		}
	}
	if extra := len(got.ch); extra != 0 {
		t.Errorf("%d more acks than publishes", extra)
	}
}

// countingConn counts the writes a client makes.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestPublishAsyncSharesWrites: the publishes that the acknowledgments of
// one read set off leave in one write. 16 are chained for 20 rounds: the
// edge answers each round's 16 requests, read at once, in one write, so a
// client writing each publish by itself would make 320 writes.
func TestPublishAsyncSharesWrites(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	var writes atomic.Int64
	var d net.Dialer
	p := dial(t, e.url, client.Options{
		Role: "publisher", RoleSecret: pubSecret,
		NetDial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, writes: &writes}, nil
		},
	})
	const width, rounds = 16, 20
	got := newAcks(width * (rounds + 1))
	var sent atomic.Int64
	var chain func(rtm.Position, error)
	chain = func(pos rtm.Position, err error) {
		got.on(pos, err)
		if sent.Add(1) <= width*rounds {
			if err := p.PublishAsync("shared", "m", chain); err != nil {
				t.Errorf("PublishAsync: %v", err)
			}
		}
	}
	// One publish whose ack starts the 16: from the reader, so that they
	// leave together from the start.
	before := writes.Load()
	start := func(pos rtm.Position, err error) {
		if err != nil {
			t.Errorf("first publish: %v", err)
		}
		for range width {
			chain(pos, err)
		}
	}
	if err := p.PublishAsync("shared", "first", start); err != nil {
		t.Fatal(err)
	}
	for i := range width * (rounds + 1) {
		if a := poll.Recv(t, fmt.Sprintf("ack %d", i), got.ch); a.err != nil {
			t.Fatalf("ack %d: %v", i, a.err)
		}
	}
	// got counts the first ack 16 times and every chained one once.
	n := writes.Load() - before
	t.Logf("%d publishes in %d writes", 1+width*rounds, n)
	if n > 2*rounds+1 {
		t.Errorf("%d publishes took %d writes, want at most %d (one per round, with slack for split reads)", 1+width*rounds, n, 2*rounds+1)
	}
}
