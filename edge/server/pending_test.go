package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sws "github.com/sluicehq/sluice/shared/websocket"
)

// TestReplyWithPingBehind: a request and a ping that arrive in one read
// are answered at once. The edge holds its replies back while more is
// buffered, to send them in one write; it used to count the ping as
// more, then wait in the read for the client's next message with the
// reply unsent. A client that waits for the reply before it sends
// anything else (a publisher with one publish in flight, whose
// keep-alive ping left right behind it) then waited until its next
// message, which never came.
func TestReplyWithPingBehind(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := sws.Dial(ctx, e.url+"/v2?appkey=test", &sws.DialOptions{Subprotocols: []string{"json"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for id := 1; id <= 3; id++ {
		req, _ := json.Marshal(map[string]any{"action": "rtm/publish", "id": id,
			"body": map[string]any{"channel": "pinged", "message": id}})
		out := ws.AppendFrame(nil, sws.OpText, req)
		out = ws.AppendFrame(out, sws.OpPing, []byte("keep-alive"))
		if err := ws.Write(out); err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() {
			_, p, err := ws.ReadMessage(nil)
			if err != nil {
				p = []byte(err.Error())
			}
			got <- p
		}()
		select {
		case p := <-got:
			var reply struct {
				Action string `json:"action"`
				ID     int    `json:"id"`
			}
			if json.Unmarshal(p, &reply) != nil || reply.Action != "rtm/publish/ok" || reply.ID != id {
				t.Fatalf("publish %d answered %s", id, p)
			}
		case <-time.After(5 * time.Second):
			ws.CloseNow() // ends the read
			<-got
			t.Fatalf("publish %d, with a ping behind it, unanswered after 5 s", id)
		}
	}
}
