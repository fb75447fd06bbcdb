//go:build !js

package client

import (
	"encoding/json"
	"testing"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestExcludeSelf: every kind of publish sends exclude_self: true with
// ExcludeSelf, and nothing of it without.
func TestExcludeSelf(t *testing.T) {
	e := newFakeEdge()
	c, fc := dialFake(t, e, Options{})
	ctx := t.Context()
	for _, tc := range []struct {
		name    string
		action  string
		exclude bool
		send    func() error
	}{
		{"Publish", rtm.ActionPublish, true, func() error { _, err := c.Publish(ctx, "ch", 1, ExcludeSelf()); return err }},
		{"Write", rtm.ActionWrite, true, func() error { _, err := c.Write(ctx, "ch", 1, ExcludeSelf()); return err }},
		{"PublishAsync", rtm.ActionPublish, true, func() error {
			acked := make(chan error, 1)
			if err := c.PublishAsync("ch", 1, func(_ rtm.Position, err error) { acked <- err }, ExcludeSelf()); err != nil {
				return err
			}
			return poll.Recv(t, "the acknowledgment", acked)
		}},
		{"Publish without", rtm.ActionPublish, false, func() error { _, err := c.Publish(ctx, "ch", 1); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- tc.send() }()
			req := fc.next(t)
			var body map[string]json.RawMessage
			req.body(t, &body)
			_, has := body["exclude_self"]
			if req.Action != tc.action || has != tc.exclude || (has && string(body["exclude_self"]) != "true") {
				t.Fatalf("sent %s %s, want %s with exclude_self %v", req.Action, req.Body, tc.action, tc.exclude)
			}
			fc.reply(t, req, rtm.PositionBody{Position: "1:2"})
			if err := poll.Recv(t, "the publish", done); err != nil {
				t.Fatal(err)
			}
		})
	}
	if err := c.PublishNoAck("ch", 1, ExcludeSelf()); err != nil {
		t.Fatal(err)
	}
	if req := fc.next(t); req.ID != nil || string(req.Body) != `{"channel":"ch","exclude_self":true,"message":1}` {
		t.Fatalf("PublishNoAck sent %+v %s", req, req.Body)
	}
}
