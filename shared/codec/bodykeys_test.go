package codec_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestBodyKeys: every codec decodes a body into rtm.BodyKeys with each of
// its top-level keys, whatever the value (null and "" included), and none
// of the keys nested in its message: how the edge tells a write's
// position given empty from no position.
func TestBodyKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body map[string]any
		want bool
	}{
		{"empty", map[string]any{"channel": "c", "message": 1, "position": ""}, true},
		{"null", map[string]any{"channel": "c", "message": 1, "position": nil}, true},
		{"set", map[string]any{"channel": "c", "message": 1, "position": "1:2"}, true},
		{"absent", map[string]any{"channel": "c", "message": 1}, false},
		{"in the message", map[string]any{"channel": "c", "message": map[string]any{"position": ""}}, false},
	}
	for _, c := range codecs {
		for _, tt := range tests {
			t.Run(c.Name()+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				frame, err := c.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionWrite, Body: tt.body})
				if err != nil {
					t.Fatal(err)
				}
				env, err := c.Decode(frame)
				if err != nil {
					t.Fatal(err)
				}
				var keys rtm.BodyKeys
				if err := c.DecodeBody(env.Body, &keys); err != nil {
					t.Fatal(err)
				}
				if keys.Has("position") != tt.want || !keys.Has("channel") {
					t.Fatalf("keys %v: position %v, want %v", keys, keys.Has("position"), tt.want)
				}
			})
		}
	}
}

// TestBodyKeysFoldCase: a JSON key that encoding/json would decode into
// a field of another case counts as that field's key.
func TestBodyKeysFoldCase(t *testing.T) {
	t.Parallel()
	var keys rtm.BodyKeys
	if err := (json.Codec{}).DecodeBody([]byte(`{"channel":"c","Position":""}`), &keys); err != nil {
		t.Fatal(err)
	}
	if !keys.Has("position") {
		t.Fatalf("keys %v: no position", keys)
	}
}
