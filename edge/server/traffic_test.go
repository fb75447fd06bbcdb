package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
)

// TestRefusalsCounted checks that every refused request counts once under
// its error code: answered or not (a publish without id gets no reply),
// and the refused WebSocket upgrade of an unknown appkey.
func TestRefusalsCounted(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectError("rtm/publish", 1, map[string]any{"channel": "$reserved", "message": 1}, "authorization_denied")
	c.send("rtm/publish", nil, map[string]any{"channel": "$reserved", "message": 2}) // no id: no reply
	c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "a"})
	c.expectError("rtm/subscribe", 3, map[string]any{"channel": "a"}, "already_subscribed")
	c.expectError("rtm/nope", 4, map[string]any{}, "invalid_operation")
	c.expectError("rtm/read", 5, map[string]any{"channel": "a", "position": "x"}, "invalid_format")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, e.url+"/v2?appkey=wrong", nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("dial with a wrong appkey: %v, %v; want HTTP 401", resp, err)
	}

	st := e.srv.Stats()
	want := map[string]uint64{"authorization_denied": 2, "already_subscribed": 1, "invalid_operation": 1,
		"invalid_format": 1, "invalid_appkey": 1}
	var total uint64
	for i, code := range server.RefusalCodes() {
		total += st.Refused[i]
		if got := st.Refused[i]; got != want[code] {
			t.Errorf("refused with %s: %d, want %d", code, got, want[code])
		}
	}
	if total != 6 {
		t.Errorf("%d refusals counted, want 6", total)
	}
}

// TestAppTraffic checks the traffic counted per app: each app's own
// messages and bytes, in and out, and together what the codec counters
// count for the edge.
func TestAppTraffic(t *testing.T) {
	t.Parallel()
	open := func(key string) *app.App {
		return &app.App{Key: key, Roles: map[string]*app.Role{
			"default": {Name: "default", Permissions: app.Permissions{Publish: []string{"*"}, Subscribe: []string{"*"}}},
		}}
	}
	e := startEdge(t, func(o *server.Options) { o.Apps = append(o.Apps, open("quiet"), open("idle")) })
	sub := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "a"})
	pubJSON := e.dial(t, "test", "")
	for i := range 3 {
		pubJSON.expectOK("rtm/publish", i+1, map[string]any{"channel": "a", "message": i})
	}
	sub.recvData("a", 3)
	quiet := e.dial(t, "quiet", "")
	quiet.expectOK("rtm/publish", 1, map[string]any{"channel": "a", "message": "other app"})

	st := e.srv.Stats()
	if len(st.Apps) != 3 || st.Apps[0].Appkey != "idle" || st.Apps[1].Appkey != "quiet" || st.Apps[2].Appkey != "test" {
		t.Fatalf("apps %+v, want idle, quiet, test", st.Apps)
	}
	idle, q, tst := st.Apps[0], st.Apps[1], st.Apps[2]
	if idle != (server.AppTraffic{Appkey: "idle"}) {
		t.Errorf("idle app: %+v, want nothing", idle)
	}
	if tst.MessagesIn != 3 || tst.MessagesOut != 3 || q.MessagesIn != 1 || q.MessagesOut != 0 {
		t.Errorf("messages in/out: test %d/%d, quiet %d/%d; want 3/3 and 1/0", tst.MessagesIn, tst.MessagesOut, q.MessagesIn, q.MessagesOut)
	}
	var in, out uint64
	for i := range st.BytesIn {
		in, out = in+st.BytesIn[i], out+st.BytesOut[i]
	}
	if tst.BytesIn == 0 || q.BytesIn == 0 || q.BytesOut == 0 || tst.BytesIn+q.BytesIn != in || tst.BytesOut+q.BytesOut != out {
		t.Errorf("bytes in/out: test %d/%d, quiet %d/%d; the edge's %d/%d", tst.BytesIn, tst.BytesOut, q.BytesIn, q.BytesOut, in, out)
	}
}
