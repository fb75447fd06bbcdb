//go:build !js

package websocket_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/sluicehq/sluice/shared/websocket"
)

// Example shows the fan-out pattern the package is built for: the server
// lays out a subscriber's backlog as frames in one buffer and sends it
// with one Write; the client reads the frames as separate messages.
func Example() {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"sluice.v1"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		var buf []byte // reused from one batch to the next
		for _, m := range []string{"tick 1", "tick 2", "tick 3"} {
			buf = c.AppendFrame(buf, websocket.OpText, []byte(m))
		}
		if err := c.Write(buf); err != nil {
			return
		}
		c.Close(websocket.StatusGoingAway, "shutting down")
		c.ReadMessage(nil) // the client's answer to the close
	}))
	defer srv.Close()

	c, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"),
		&websocket.DialOptions{Subprotocols: []string{"sluice.v1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.CloseNow()
	fmt.Println("subprotocol:", c.Subprotocol())
	var msg []byte
	for {
		var err error
		_, msg, err = c.ReadMessage(msg)
		if err != nil {
			fmt.Println("closed:", websocket.CloseStatus(err))
			break
		}
		fmt.Println(string(msg))
	}
	<-done
	// Output:
	// subprotocol: sluice.v1
	// tick 1
	// tick 2
	// tick 3
	// closed: 1001
}
