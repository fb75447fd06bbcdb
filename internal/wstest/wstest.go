// Package wstest gives tests the edge's side of a real WebSocket over
// loopback (shared/websocket at both ends), for the packages that drive
// one connection without a whole edge.
package wstest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/websocket"
)

// ServerSide returns the accepting side of a WebSocket connection over
// loopback; both sides are closed at once when tb ends (the caller may
// close its side first, gracefully).
func ServerSide(tb testing.TB) *websocket.Conn {
	tb.Helper()
	return ServerSideWith(tb, nil, nil)
}

// ServerSideWith is ServerSide with the options of each side (nil:
// defaults), e.g. to negotiate permessage-deflate.
func ServerSideWith(tb testing.TB, accept *websocket.AcceptOptions, dial *websocket.DialOptions) *websocket.Conn {
	tb.Helper()
	accepted := make(chan *websocket.Conn, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, accept)
		if err != nil {
			tb.Error(err)
		}
		accepted <- ws
	}))
	tb.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), dial)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.CloseNow() })
	ws := <-accepted
	if ws == nil {
		tb.FailNow()
	}
	tb.Cleanup(func() { ws.CloseNow() })
	return ws
}
