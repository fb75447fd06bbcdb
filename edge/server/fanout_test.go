//go:build unix

package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
)

// TestFanoutStalledSubscriberHoldsUpNobody floods a channel with
// subscribers that read, subscribers that pause now and then, and one
// that does not read at all until the flood is over, all written to by
// the fan-out workers (fanout.go): the others get every message in order
// while the stalled one's socket is full, and the stalled one, reading
// again, gets every message too, whole and in order, though its writes
// went from the workers to a writer goroutine of its own mid-frame.
func TestFanoutStalledSubscriberHoldsUpNobody(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) {
		o.Limits.RequestsPerSecond = 1 << 30
		o.Limits.WriteTimeout = time.Minute
		o.Limits.PingInterval = time.Hour // the stalled one answers no ping
	})
	subscribe := func() *rawClient {
		c := dialSmallWindow(t, e)
		c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "flood"})
		return c
	}
	stalled := subscribe()
	const readers, pausers = 3, 2
	const n, window = 1000, 30 // 8 MB each: more than loopback socket buffers absorb
	const lag = 500            // 2 MB: how far behind a pauser falls
	progress := make([]atomic.Int64, readers+pausers)
	errs := make(chan error, readers+pausers)
	// The publisher keeps pace with the readers, not the pausers, whose
	// sockets so fill while they pause.
	slowest := func() int64 {
		m := progress[0].Load()
		for i := range readers {
			m = min(m, progress[i].Load())
		}
		return m
	}
	var wg sync.WaitGroup
	for i := range readers + pausers {
		c := subscribe()
		wg.Go(func() {
			if i < readers {
				errs <- readSequence(c, "flood", n, &progress[i])
				return
			}
			// A pauser reads in steps, and after each waits until the
			// readers are far ahead, so that its socket fills and empties
			// again.
			for to := 200; ; to += 200 {
				err := readRange(c, "flood", int(progress[i].Load()), min(to, n), &progress[i])
				if err != nil || to >= n {
					errs <- err
					return
				}
				for deadline := time.Now().Add(time.Minute); slowest() < int64(min(to+lag, n)); {
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("pauser at %d: the readers are at %d", to, slowest())
						return
					}
					time.Sleep(time.Millisecond) // poll the readers' progress
				}
			}
		})
	}
	pub := e.dial(t, "test", "")
	pad := strings.Repeat("p", 8000)
	for i := range n {
		for deadline := time.Now().Add(time.Minute); int64(i)-slowest() >= window; {
			if time.Now().After(deadline) {
				t.Fatalf("message %d: the slowest reader is at %d", i, slowest())
			}
			time.Sleep(time.Millisecond) // poll the readers' progress
		}
		pub.send("rtm/publish", nil, map[string]any{"channel": "flood", "message": map[string]any{"i": i, "pad": pad}})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("subscriber: %v", err)
		}
	}
	var got atomic.Int64
	if err := readSequence(stalled, "flood", n, &got); err != nil {
		t.Fatalf("stalled subscriber, after %d messages: %v", got.Load(), err)
	}
}

// dialSmallWindow is edge.dial with a small receive buffer: a subscriber
// that does not read fills its socket after a few hundred kilobytes
// rather than the megabytes loopback autotuning grows to.
func dialSmallWindow(t *testing.T, e *edge) *rawClient {
	t.Helper()
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 32<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, e.url+"/v2?appkey=test", &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &rawClient{t: t, ws: ws}
}
