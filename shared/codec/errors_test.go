package codec_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// TestErrorsSameInEveryCodec sends the same malformed PDUs in every codec:
// each is refused with the same code and the same reason, and no reason
// names a Go type or a codec's own vocabulary ("rtm.PublishBody.channel",
// "positive integer", "UTF-8 text string", "object").
func TestErrorsSameInEveryCodec(t *testing.T) {
	t.Parallel()
	pub := func() any { return new(rtm.PublishBody) }
	sub := func() any { return new(rtm.SubscribeBody) }
	hs := func() any { return new(rtm.HandshakeBody) }
	data := func() any { return new(rtm.SubscriptionData) }
	pdu := func(action string, body any) map[string]any {
		return map[string]any{"action": action, "id": int64(1), "body": body}
	}
	tests := []struct {
		name   string
		pdu    any
		into   func() any
		reason string
	}{
		{"integer channel", pdu("rtm/publish", map[string]any{"channel": int64(5), "message": int64(1)}), pub, `body field "channel" has the wrong type (number)`},
		{"array channel", pdu("rtm/publish", map[string]any{"channel": []any{"a"}}), pub, `body field "channel" has the wrong type (array)`},
		{"string history", pdu("rtm/subscribe", map[string]any{"channel": "a", "history": "x"}), sub, `body field "history" has the wrong type (string)`},
		{"string count", pdu("rtm/subscribe", map[string]any{"channel": "a", "history": map[string]any{"count": "x"}}), sub, `body field "history.count" has the wrong type (string)`},
		{"fractional count", pdu("rtm/subscribe", map[string]any{"channel": "a", "history": map[string]any{"age": 1.5}}), sub, `body field "history.age" has the wrong type (number)`},
		{"string force", pdu("rtm/subscribe", map[string]any{"channel": "a", "force": "yes"}), sub, `body field "force" has the wrong type (string)`},
		{"integer method", pdu("auth/handshake", map[string]any{"method": int64(1)}), hs, `body field "method" has the wrong type (number)`},
		{"bool data", pdu("auth/handshake", map[string]any{"method": "role_secret", "data": true}), hs, `body field "data" has the wrong type (bool)`},
		{"integer role", pdu("auth/handshake", map[string]any{"method": "role_secret", "data": map[string]any{"role": int64(7)}}), hs, `body field "data.role" has the wrong type (number)`},
		{"map messages", pdu("rtm/subscription/data", map[string]any{"messages": map[string]any{}}), data, `body field "messages" has the wrong type (map)`},
		{"body not a map", pdu("rtm/publish", []any{int64(1)}), pub, "PDU body must be a map"},
		{"PDU not a map", []any{"rtm/publish"}, pub, "PDU must be a map"},
		{"integer action", map[string]any{"action": int64(3)}, pub, "PDU action must be a string"},
		{"no action", map[string]any{"id": int64(1)}, pub, "PDU has no action"},
		{"fractional id", map[string]any{"action": "rtm/publish", "id": 1.5}, pub, "PDU id must be an integer or a string"},
		{"bool id", map[string]any{"action": "rtm/publish", "id": true}, pub, "PDU id must be an integer or a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range codecs {
				frame, err := c.AppendValue(nil, tt.pdu)
				if err != nil {
					t.Fatalf("%s: encode: %v", c.Name(), err)
				}
				env, err := c.Decode(frame)
				if err == nil {
					err = c.DecodeBody(env.Body, tt.into())
				}
				e, ok := rtm.AsError(err)
				if !ok || e.Code != rtm.CodeInvalidFormat || e.Reason != tt.reason {
					t.Errorf("%s: %v, want invalid_format %q", c.Name(), err, tt.reason)
				}
				if ok && (strings.Contains(e.Reason, "rtm.") || strings.Contains(e.Reason, "Go ")) {
					t.Errorf("%s: reason %q names Go types", c.Name(), e.Reason)
				}
			}
		})
	}
}
