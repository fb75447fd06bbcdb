package server_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/poll"
)

// The rest of Satori's RTM API, spoken the way its SDKs speak: raw JSON
// frames (PROTOCOL.md, "Beyond the basics").

// raw sends one frame as written and returns the reply, which must carry
// id; the body keeps its numbers exact.
func (c *rawClient) raw(frame string, id int) pdu {
	c.t.Helper()
	c.sendText(frame)
	p := c.recv()
	if p.ID == nil || p.ID.(json.Number).String() != itoa(id) {
		c.t.Fatalf("%s: reply %+v does not carry id %d", frame, p, id)
	}
	return p
}

// wantBody fails unless p is action with exactly body.
func wantBody(t *testing.T, p pdu, action string, body map[string]any) {
	t.Helper()
	if p.Action != action || !reflect.DeepEqual(p.Body, body) {
		t.Fatalf("got %s %v, want %s %v", p.Action, p.Body, action, body)
	}
}

// TestSatoriErrorReasons: the errors apps compare carry Satori's reason,
// and the body holds exactly error and reason.
func TestSatoriErrorReasons(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	badPos := map[string]any{"error": "invalid_format", "reason": "Invalid PDU: 'position' was invalid"}
	denied := map[string]any{"error": "authorization_denied", "reason": "Unauthorized"}
	tests := []struct {
		name   string
		frame  string
		action string
		body   map[string]any
	}{
		{"publish denied", `{"action":"rtm/publish","id":1,"body":{"channel":"$sys.x","message":1}}`, "rtm/publish/error", denied},
		{"write denied", `{"action":"rtm/write","id":1,"body":{"channel":"$sys.x","message":1}}`, "rtm/write/error", denied},
		{"delete denied", `{"action":"rtm/delete","id":1,"body":{"channel":"$sys.x"}}`, "rtm/delete/error", denied},
		{"read denied", `{"action":"rtm/read","id":1,"body":{"channel":"$sys.x"}}`, "rtm/read/error", denied},
		{"subscribe denied", `{"action":"rtm/subscribe","id":1,"body":{"channel":"$sys.x"}}`, "rtm/subscribe/error", denied},
		{"read position", `{"action":"rtm/read","id":1,"body":{"channel":"a","position":"nonsense"}}`, "rtm/read/error", badPos},
		{"subscribe position", `{"action":"rtm/subscribe","id":1,"body":{"channel":"a","position":"1:x"}}`, "rtm/subscribe/error", badPos},
		{"write position", `{"action":"rtm/write","id":1,"body":{"channel":"a","message":1,"position":"-1:2"}}`, "rtm/write/error", badPos},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantBody(t, c.raw(tt.frame, 1), tt.action, tt.body)
		})
	}
	nonce := c.handshake(2, "admin")
	wantBody(t, c.raw(`{"action":"auth/authenticate","id":3,"body":{"method":"role_secret","credentials":{"hash":"`+roleHash("guess", nonce)+`"}}}`, 3),
		"auth/authenticate/error", map[string]any{"error": "authentication_failed", "reason": "Unauthenticated"})
	// The connection stays usable, and nothing was stored.
	c.expectOK("rtm/publish", 4, map[string]any{"channel": "a", "message": "ok"})
	if m := c.expectOK("rtm/read", 5, map[string]any{"channel": "a"})["message"]; m != "ok" {
		t.Fatalf("read after the refusals: %v, want ok", m)
	}
}

// TestUnknownOptionsRefused: a value of an option the edge does not know,
// or an option where it does not apply, is an error reply, never ignored;
// nothing is stored and the connection goes on.
func TestUnknownOptionsRefused(t *testing.T) {
	t.Parallel()
	eachEdge(t, testUnknownOptionsRefused)
}

func testUnknownOptionsRefused(t *testing.T, e *edge) {
	c := e.dial(t, "test", "")
	p1 := c.expectOK("rtm/publish", 1, map[string]any{"channel": "kv", "message": "first"})["position"]
	tests := []struct {
		name  string
		frame string
		code  string
	}{
		{"only", `{"action":"rtm/subscribe","id":1,"body":{"channel":"kv","only":"something"}}`, "invalid_format"},
		{"only not a string", `{"action":"rtm/subscribe","id":1,"body":{"channel":"kv","only":true}}`, "invalid_format"},
		{"read on publish", `{"action":"rtm/publish","id":1,"body":{"channel":"kv","message":2,"read":"everything"}}`, "invalid_format"},
		{"read on delete", `{"action":"rtm/delete","id":1,"body":{"channel":"kv","read":"next_message"}}`, "invalid_format"},
		{"purge not a bool", `{"action":"rtm/delete","id":1,"body":{"channel":"kv","purge":"yes"}}`, "invalid_format"},
		{"ttl zero", `{"action":"rtm/publish","id":1,"body":{"channel":"kv","message":2,"ttl":0,"ttl_message":3}}`, "invalid_format"},
		{"ttl too long", `{"action":"rtm/publish","id":1,"body":{"channel":"kv","message":2,"ttl":86401,"ttl_message":3}}`, "invalid_format"},
		{"ttl fraction", `{"action":"rtm/publish","id":1,"body":{"channel":"kv","message":2,"ttl":1.5,"ttl_message":3}}`, "invalid_format"},
		{"ttl_message alone", `{"action":"rtm/write","id":1,"body":{"channel":"kv","message":2,"ttl_message":3}}`, "invalid_format"},
		{"position on publish", `{"action":"rtm/publish","id":1,"body":{"channel":"kv","message":2,"position":"` + p1.(string) + `"}}`, "invalid_format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := c.raw(tt.frame, 1)
			if p.Action == "" || p.Body["error"] != tt.code || p.Body["reason"] == "" {
				t.Fatalf("got %s %v, want error %s with a reason", p.Action, p.Body, tt.code)
			}
		})
	}
	if b := c.expectOK("rtm/read", 2, map[string]any{"channel": "kv"}); b["message"] != "first" || b["position"] != p1 {
		t.Fatalf("after the refusals the channel holds %v, want first at %v", b, p1)
	}
}

// TestReadPrevious: read asks for the channel's message before a publish,
// write or delete, in the ok reply (previous_message, _on_ok) and not in
// it for _on_error.
func TestReadPrevious(t *testing.T) {
	t.Parallel()
	eachEdge(t, testReadPrevious)
}

func testReadPrevious(t *testing.T, e *edge) {
	c := e.dial(t, "test", "")
	wantBody(t, c.raw(`{"action":"rtm/publish","id":1,"body":{"channel":"p","message":{"v":1},"read":"previous_message"}}`, 1),
		"rtm/publish/ok", map[string]any{"position": c.lastPosition(t, "p"), "previous": map[string]any{"message": nil, "position": "0:0"}})
	p1 := c.lastPosition(t, "p")
	p := c.raw(`{"action":"rtm/write","id":2,"body":{"channel":"p","message":{"v":2},"read":"previous_message_on_ok"}}`, 2)
	wantBody(t, p, "rtm/write/ok", map[string]any{"position": c.lastPosition(t, "p"),
		"previous": map[string]any{"message": map[string]any{"v": json.Number("1")}, "position": p1}})
	p2 := c.lastPosition(t, "p")
	p = c.raw(`{"action":"rtm/publish","id":3,"body":{"channel":"p","message":3,"read":"previous_message_on_error"}}`, 3)
	p3 := c.lastPosition(t, "p")
	wantBody(t, p, "rtm/publish/ok", map[string]any{"position": p3})
	p = c.raw(`{"action":"rtm/delete","id":4,"body":{"channel":"p","read":"previous_message"}}`, 4)
	wantBody(t, p, "rtm/delete/ok", map[string]any{"position": c.lastPosition(t, "p"),
		"previous": map[string]any{"message": json.Number("3"), "position": p3}})
	if p2 == p1 || p3 == p2 {
		t.Fatalf("positions %s %s %s do not advance", p1, p2, p3)
	}
	// The previous message is a read: a role that may publish but not
	// subscribe is refused it (here the reserved channel, for default).
	wantBody(t, c.raw(`{"action":"rtm/publish","id":5,"body":{"channel":"$x","message":1,"read":"previous_message"}}`, 5),
		"rtm/publish/error", map[string]any{"error": "authorization_denied", "reason": "Unauthorized"})
}

// lastPosition is the position of the newest message of channel.
func (c *rawClient) lastPosition(t *testing.T, channel string) string {
	t.Helper()
	c.send("rtm/read", 999, map[string]any{"channel": channel})
	p := c.recv()
	if p.Action != "rtm/read/ok" {
		t.Fatalf("read %s: %s %v", channel, p.Action, p.Body)
	}
	return p.Body["position"].(string)
}

// TestWriteCompareAndSet: rtm/write with position stores the message only
// if position is the channel's newest; otherwise position_mismatch, with
// the channel's message if asked, and nothing is stored or delivered.
func TestWriteCompareAndSet(t *testing.T) {
	t.Parallel()
	eachEdge(t, testWriteCompareAndSet)
}

func testWriteCompareAndSet(t *testing.T, e *edge) {
	c := e.dial(t, "test", "")
	sub := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "cas"})
	// An empty channel's newest is 0:0, what a read of it answers.
	empty := c.expectOK("rtm/read", 1, map[string]any{"channel": "cas"})["position"].(string)
	p1 := c.raw(`{"action":"rtm/write","id":2,"body":{"channel":"cas","message":"a","position":"`+empty+`"}}`, 2)
	if p1.Action != "rtm/write/ok" {
		t.Fatalf("CAS at %s on an empty channel: %s %v", empty, p1.Action, p1.Body)
	}
	pos1 := p1.Body["position"].(string)
	p2 := c.raw(`{"action":"rtm/write","id":3,"body":{"channel":"cas","message":"b","position":"`+pos1+`"}}`, 3)
	if p2.Action != "rtm/write/ok" {
		t.Fatalf("CAS at the newest %s: %s %v", pos1, p2.Action, p2.Body)
	}
	pos2 := p2.Body["position"].(string)
	stale := c.raw(`{"action":"rtm/write","id":4,"body":{"channel":"cas","message":"c","position":"`+pos1+`"}}`, 4)
	if stale.Action != "rtm/write/error" || stale.Body["error"] != "position_mismatch" || len(stale.Body) != 2 {
		t.Fatalf("CAS at the stale %s: %s %v, want position_mismatch {error, reason}", pos1, stale.Action, stale.Body)
	}
	withPrev := c.raw(`{"action":"rtm/write","id":5,"body":{"channel":"cas","message":"c","position":"`+pos1+`","read":"previous_message_on_error"}}`, 5)
	if withPrev.Action != "rtm/write/error" || withPrev.Body["error"] != "position_mismatch" ||
		!reflect.DeepEqual(withPrev.Body["previous"], map[string]any{"message": "b", "position": pos2}) {
		t.Fatalf("CAS refused with previous_message_on_error: %s %v, want previous b at %s", withPrev.Action, withPrev.Body, pos2)
	}
	// A refused write without id gets no reply, and stores nothing either.
	c.sendText(`{"action":"rtm/write","body":{"channel":"cas","message":"d","position":"` + pos1 + `"}}`)
	if b := c.expectOK("rtm/read", 6, map[string]any{"channel": "cas"}); b["message"] != "b" || b["position"] != pos2 {
		t.Fatalf("after refused writes the channel holds %v, want b at %s", b, pos2)
	}
	c.expectOK("rtm/publish", 7, map[string]any{"channel": "cas", "message": "end"})
	if msgs, _ := sub.recvData("cas", 3); !reflect.DeepEqual(msgs, []any{"a", "b", "end"}) {
		t.Fatalf("subscriber got %v, want a, b, end: nothing of the refused writes", msgs)
	}
}

// TestDeletePurge: rtm/delete with purge drops the history: the reply has
// no position, the newest message is gone, its positions are expired,
// and a live subscriber reads on with the next message.
func TestDeletePurge(t *testing.T) {
	t.Parallel()
	eachEdge(t, testDeletePurge)
}

func testDeletePurge(t *testing.T, e *edge) {
	c := e.dial(t, "test", "")
	sub := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "h"})
	p1 := c.expectOK("rtm/publish", 1, map[string]any{"channel": "h", "message": 1})["position"].(string)
	c.expectOK("rtm/publish", 2, map[string]any{"channel": "h", "message": 2})
	p3 := c.expectOK("rtm/publish", 3, map[string]any{"channel": "h", "message": 3})["position"].(string)
	if msgs, _ := sub.recvData("h", 3); len(msgs) != 3 {
		t.Fatalf("before purge: %v", msgs)
	}
	wantBody(t, c.raw(`{"action":"rtm/delete","id":4,"body":{"channel":"h","purge":true,"read":"previous_message"}}`, 4),
		"rtm/delete/ok", map[string]any{"previous": map[string]any{"message": json.Number("3"), "position": p3}})
	if b := c.expectOK("rtm/read", 5, map[string]any{"channel": "h"}); b["message"] != nil {
		t.Fatalf("read after purge: %v, want null", b)
	}
	c.expectError("rtm/read", 6, map[string]any{"channel": "h", "position": p1}, "expired_position")
	c.expectError("rtm/subscribe", 7, map[string]any{"channel": "h", "subscription_id": "old", "position": p1}, "expired_position")
	wantBody(t, c.raw(`{"action":"rtm/delete","id":8,"body":{"channel":"h","purge":true}}`, 8), "rtm/delete/ok", map[string]any{})
	c.expectOK("rtm/publish", 9, map[string]any{"channel": "h", "message": "after"})
	if msgs, _ := sub.recvData("h", 1); !reflect.DeepEqual(msgs, []any{"after"}) {
		t.Fatalf("live subscriber after purge got %v, want after", msgs)
	}
	hist := e.dial(t, "test", "")
	hist.expectOK("rtm/subscribe", 1, map[string]any{"channel": "h", "history": map[string]any{"count": 10}})
	if msgs, _ := hist.recvData("h", 1); !reflect.DeepEqual(msgs, []any{"after"}) {
		t.Fatalf("history after purge: %v, want only after", msgs)
	}
}

// TestOnlyValueChanges: a subscription with only: value_changes skips a
// message equal (as a value: map keys in any order) to the one delivered
// before it, history included; other subscribers get everything.
func TestOnlyValueChanges(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.sendText(`{"action":"rtm/publish","body":{"channel":"v","message":1}}`)
	c.sendText(`{"action":"rtm/publish","body":{"channel":"v","message":1}}`)
	c.expectOK("rtm/publish", 1, map[string]any{"channel": "v", "message": 2})
	sub := e.dial(t, "test", "")
	sub.raw(`{"action":"rtm/subscribe","id":1,"body":{"channel":"v","only":"value_changes","history":{"count":3}}}`, 1)
	plain := e.dial(t, "test", "")
	plain.expectOK("rtm/subscribe", 1, map[string]any{"channel": "v"})
	for _, m := range []string{`2`, `2`, `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, `{"a":1,"b":[2,1]}`, `1`, `1.0`, `"1"`, `null`, `null`, `"end"`} {
		c.sendText(`{"action":"rtm/publish","body":{"channel":"v","message":` + m + `}}`)
	}
	want := []any{json.Number("1"), json.Number("2"), map[string]any{"a": json.Number("1"), "b": []any{json.Number("1"), json.Number("2")}},
		map[string]any{"a": json.Number("1"), "b": []any{json.Number("2"), json.Number("1")}}, json.Number("1"),
		json.Number("1.0"), "1", nil, "end"} // 1.0 is a float, which the edge keeps apart from the integer 1
	if msgs, _ := sub.recvData("v", len(want)); !reflect.DeepEqual(msgs, want) {
		t.Fatalf("value_changes got %v, want %v", msgs, want)
	}
	if msgs, _ := plain.recvData("v", 11); len(msgs) != 11 {
		t.Fatalf("a plain subscriber got %d messages, want all 11", len(msgs))
	}
}

// TestTTLDeadMansSwitch: a publish with ttl and ttl_message arms a switch:
// if nothing else is published on the channel within ttl, the edge
// publishes ttl_message there; a publish in between disarms it.
func TestTTLDeadMansSwitch(t *testing.T) {
	t.Parallel()
	eachEdge(t, testTTLDeadMansSwitch)
}

func testTTLDeadMansSwitch(t *testing.T, e *edge) {
	c := e.dial(t, "test", "")
	sub := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "dms"})
	c.raw(`{"action":"rtm/publish","id":1,"body":{"channel":"dms","message":"alive","ttl":1,"ttl_message":{"dead":true}}}`, 1)
	// Nothing else is published: ttl_message follows, by itself.
	if msgs, _ := sub.recvData("dms", 2); !reflect.DeepEqual(msgs, []any{"alive", map[string]any{"dead": true}}) {
		t.Fatalf("switch that fired: got %v, want alive then the ttl_message", msgs)
	}
	// The switch counts once its append returned, which may be after
	// the message reached the subscriber.
	waitStats(t, e, func(st server.Stats) bool { return st.TTL.Fired == 1 })
	if st := e.srv.Stats(); st.TTL.Skipped != 0 {
		t.Fatalf("skipped %d, want 0", st.TTL.Skipped)
	}
	// Armed by a write, then something else is published within ttl: the
	// two frames go out back to back, so the second is handled well
	// within the 2 s of the first however slow the machine.
	c.sendText(`{"action":"rtm/write","id":2,"body":{"channel":"dms","message":"alive again","ttl":2,"ttl_message":"dead"}}`)
	c.sendText(`{"action":"rtm/publish","id":3,"body":{"channel":"dms","message":"still here"}}`)
	if p := c.recv(); p.Action != "rtm/write/ok" {
		t.Fatalf("write with ttl: %s %v", p.Action, p.Body)
	}
	if p := c.recv(); p.Action != "rtm/publish/ok" {
		t.Fatalf("publish after it: %s %v", p.Action, p.Body)
	}
	waitStats(t, e, func(st server.Stats) bool { return st.TTL.Skipped == 1 })
	c.expectOK("rtm/publish", 4, map[string]any{"channel": "dms", "message": "end"})
	if msgs, _ := sub.recvData("dms", 3); !reflect.DeepEqual(msgs, []any{"alive again", "still here", "end"}) {
		t.Fatalf("switch disarmed by a publish: got %v, want no ttl_message", msgs)
	}
	if st := e.srv.Stats(); st.TTL.Fired != 1 {
		t.Fatalf("fired %d, want still 1", st.TTL.Fired)
	}
	// An armed switch does not outlive the edge (goleak, and Shutdown
	// returning, check it).
	c.raw(`{"action":"rtm/publish","id":5,"body":{"channel":"dms","message":"x","ttl":3600,"ttl_message":"y"}}`, 5)
}

// waitStats polls the edge's counters (a timer raises them) until ok
// holds.
func waitStats(t *testing.T, e *edge, ok func(server.Stats) bool) {
	t.Helper()
	poll.UntilNil(t, "the counters", func() error {
		if st := e.srv.Stats(); !ok(st) {
			return fmt.Errorf("still %+v", st)
		}
		return nil
	})
}
