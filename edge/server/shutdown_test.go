package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
)

// TestShutdownDeadlineCutsCloseHandshake checks that Shutdown returns at
// its deadline when a client never answers the close frame: the edge must
// not wait out the WebSocket library's own 5s close handshake.
func TestShutdownDeadlineCutsCloseHandshake(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "") // never reads: never answers the close
	c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "x"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := e.srv.Shutdown(ctx)
	if !errors.Is(err, server.ErrShutdown) {
		t.Fatalf("Shutdown = %v, want ErrShutdown", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Shutdown took %v with a 200ms deadline", d)
	}
	if n := e.srv.Stats().Connections; n != 0 {
		t.Fatalf("%d connections left after Shutdown", n)
	}
}

// TestShutdownRacingUpgrades checks that connections whose upgrade races
// with Shutdown are awaited by it and told to go away: when Shutdown
// returns no handler runs, and every client that got in reads 1001.
func TestShutdownRacingUpgrades(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	const dialers = 16
	results := make(chan error, dialers)
	start := make(chan struct{})
	for range dialers {
		go func() {
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, e.url+"/v2?appkey=test", nil)
			if err != nil {
				results <- nil // refused while draining: fine
				return
			}
			defer ws.CloseNow()
			_, _, err = ws.Read(ctx)
			results <- err
		}()
	}
	close(start)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := e.srv.Stats().Connections; n != 0 {
		t.Fatalf("%d connection handlers still running after Shutdown returned", n)
	}
	for range dialers {
		if err := <-results; err != nil && websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("a client that got in read %v, want close 1001", err)
		}
	}
}
