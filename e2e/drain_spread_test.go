package e2e

// The drain of an edge process on SIGTERM, seen from outside: /readyz
// answers 503 while the edge still serves (drain_delay), then the
// connections are closed spread over drain_spread. Times are asserted
// only as bounds the edge guarantees whatever the machine's load: a close
// scheduled at T reaches a client at T or later, never sooner.

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// closeWatch is a raw WebSocket client that records when the edge's
// close reached it, and with which code.
type closeWatch struct {
	mu     sync.Mutex
	at     time.Time // zero until closed
	status websocket.StatusCode
	done   chan struct{}
}

// watchCloses opens n connections to an edge process.
func watchCloses(t *testing.T, e *edgeProcess, n int) []*closeWatch {
	t.Helper()
	ws := make([]*closeWatch, n)
	for i := range ws {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		conn, _, err := websocket.Dial(ctx, e.url+"/v2?appkey="+e.appkey, nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		// A reply proves the edge tracks the connection (a connection
		// still being set up when the drain begins is closed at once).
		if err := conn.Write(ctx, websocket.MessageText, []byte(`{"action":"rtm/read","id":1,"body":{"channel":"x"}}`)); err != nil {
			cancel()
			t.Fatal(err)
		}
		if _, _, err := conn.Read(ctx); err != nil {
			cancel()
			t.Fatal(err)
		}
		w := &closeWatch{done: make(chan struct{})}
		go func() {
			defer close(w.done)
			defer cancel()
			for {
				if _, _, err := conn.Read(ctx); err != nil {
					w.mu.Lock()
					w.at, w.status = time.Now(), websocket.CloseStatus(err)
					w.mu.Unlock()
					return
				}
			}
		}()
		t.Cleanup(func() {
			conn.CloseNow()
			<-w.done
		})
		ws[i] = w
	}
	return ws
}

func (w *closeWatch) closed() (time.Time, websocket.StatusCode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at, w.status
}

// closedBy counts the watchers closed before t.
func closedBy(ws []*closeWatch, t time.Time) int {
	n := 0
	for _, w := range ws {
		if at, _ := w.closed(); !at.IsZero() && at.Before(t) {
			n++
		}
	}
	return n
}

// readyz returns the status of the edge's /readyz, 0 if unreachable.
func readyz(e *edgeProcess) int {
	code, err := httpStatus("http" + strings.TrimPrefix(e.url, "ws") + "/readyz")
	if err != nil {
		return 0
	}
	return code
}

// drainingEdge starts an edge process with the given limits.
func drainingEdge(t *testing.T, limits string) *edgeProcess {
	t.Helper()
	return startEdgeProcess(t, "--config", edgecmdtest.WriteConfig(t, "limits:\n"+limits))
}

// TestDrainDelayKeepsServing: after SIGTERM the edge answers /readyz 503
// and still serves, open connections and new ones, for its drain_delay
// (a long one here, ended by a second SIGTERM); then it closes the
// connections with 1001, spread over drain_spread: by any time x after
// the second signal, no more closes have reached the clients than were
// due by x, and the last comes no sooner than its slot.
func TestDrainDelayKeepsServing(t *testing.T) {
	t.Parallel()
	const delay, spread, n = 30 * time.Second, 2 * time.Second, 8
	e := drainingEdge(t, "  drain_delay: 30s\n  drain_spread: 2s\n  shutdown_timeout: 10s\n")
	ws := watchCloses(t, e, n)
	if code := readyz(e); code != http.StatusOK {
		t.Fatalf("/readyz before the drain: %d, want 200", code)
	}

	term := time.Now()
	e.signal(t, syscall.SIGTERM)
	poll.Until(t, "/readyz to answer 503", func() bool { return readyz(e) == http.StatusServiceUnavailable })
	// Still serving: a new connection is accepted, and publishes.
	c, err := client.Dial(ctxFor(t), e.url, &client.Options{AppKey: e.appkey, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("a new connection during the drain delay: %v, want it served", err)
	}
	if _, err := c.Publish(ctxFor(t), "chat", "during the delay"); err != nil {
		t.Fatalf("a publish during the drain delay: %v", err)
	}
	c.Close()
	if since := time.Since(term); since < delay {
		if k := closedBy(ws, time.Now()); k != 0 {
			t.Fatalf("%d connections closed %v after SIGTERM, within the %v delay", k, since, delay)
		}
		if code := readyz(e); code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz %v into the delay: %d, want 503", since, code)
		}
	}

	hurry := time.Now()
	e.signal(t, syscall.SIGTERM) // a second signal ends the delay
	for _, w := range ws {
		<-w.done
		if _, st := w.closed(); st != websocket.StatusGoingAway {
			t.Fatalf("a connection closed with %v, want 1001 going away", st)
		}
	}
	if code := e.exitCode(t, 20*time.Second); code != 0 {
		t.Fatalf("edge exited %d, want 0", code)
	}
	// At most n+1 connections were open when the closes began (the
	// client above may not be gone yet): the i-th close is due no sooner
	// than i*spread/(n+1) after the second signal.
	step := spread / (n + 1)
	for _, x := range []time.Duration{step / 2, spread / 4, spread / 2} {
		if k, most := closedBy(ws, hurry.Add(x)), int(x/step)+1; k > most {
			t.Errorf("%d of %d connections closed within %v of the spread's start, want at most %d: not spread", k, n, x, most)
		}
	}
	last := time.Time{}
	for _, w := range ws {
		if at, _ := w.closed(); at.After(last) {
			last = at
		}
	}
	if d := last.Sub(hurry); d < (n-1)*step {
		t.Errorf("the last close came %v into the spread, sooner than its slot at %v", d, (n-1)*step)
	}
	t.Logf("closes spread over %v after the second signal (window %v)", last.Sub(hurry).Round(time.Millisecond), spread)
}

// TestDrainWaitsItsDelay: on a single SIGTERM, no connection is closed
// before drain_delay has passed; then the edge closes it and exits.
func TestDrainWaitsItsDelay(t *testing.T) {
	t.Parallel()
	const delay = time.Second
	e := drainingEdge(t, "  drain_delay: 1s\n  drain_spread: 0s\n  shutdown_timeout: 5s\n")
	ws := watchCloses(t, e, 1)
	term := time.Now()
	e.signal(t, syscall.SIGTERM)
	<-ws[0].done
	at, st := ws[0].closed()
	if st != websocket.StatusGoingAway || at.Sub(term) < delay {
		t.Fatalf("closed %v after SIGTERM with %v, want 1001 no sooner than the %v delay", at.Sub(term), st, delay)
	}
	if code := e.exitCode(t, 20*time.Second); code != 0 {
		t.Fatalf("edge exited %d, want 0", code)
	}
}
