package json_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestDecodeInvalidUTF8 checks that a frame with bytes that are not UTF-8
// anywhere, strings included, is refused with json_parse_error rather
// than decoded with each bad byte turned into U+FFFD.
func TestDecodeInvalidUTF8(t *testing.T) {
	t.Parallel()
	frames := []struct {
		name  string
		frame string
	}{
		{"action", "{\"action\":\"\xff\"}"},
		{"id", "{\"action\":\"a\",\"id\":\"\xfe\"}"},
		{"channel", "{\"action\":\"rtm/publish\",\"body\":{\"channel\":\"alias\xff\",\"message\":1}}"},
		{"message", "{\"action\":\"rtm/publish\",\"body\":{\"channel\":\"a\",\"message\":\"x\xfey\"}}"},
		{"message key", "{\"action\":\"rtm/publish\",\"body\":{\"channel\":\"a\",\"message\":{\"\xc3\":1}}}"},
		{"unknown key", "{\"action\":\"a\",\"\xed\xa0\x80\":1}"}, // a UTF-16 surrogate, encoded
	}
	for _, tc := range frames {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Decode([]byte(tc.frame))
			codectest.WantCode(t, err, rtm.CodeJSONParseError)
		})
	}
}

// TestReplacementCharIsItsOwnChannel checks that U+FFFD written as an
// escape or as its UTF-8 bytes names a channel of its own, which an
// invalid byte cannot alias any more.
func TestReplacementCharIsItsOwnChannel(t *testing.T) {
	t.Parallel()
	for _, frame := range []string{
		`{"action":"rtm/publish","body":{"channel":"alias\ufffd","message":1}}`,
		"{\"action\":\"rtm/publish\",\"body\":{\"channel\":\"alias\xef\xbf\xbd\",\"message\":1}}",
	} {
		var body rtm.PublishBody
		codectest.Decode(t, c, []byte(frame), &body)
		if body.Channel != "alias\ufffd" {
			t.Fatalf("channel %q, want %q", body.Channel, "alias\ufffd")
		}
	}
}

// TestDecodeBodyDuplicateKeys checks that a key given twice in any object
// of a body is invalid_format, as it is in the PDU, whatever the body type.
func TestDecodeBodyDuplicateKeys(t *testing.T) {
	t.Parallel()
	many := `{"channel":"c","message":{`
	for i := range 40 {
		many += `"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`
	}
	many += `"kaa":2}}`
	bodies := []struct {
		name string
		body string
		into func() any
	}{
		{"channel twice", `{"channel":"a","channel":"$secret","message":1}`, func() any { return new(rtm.PublishBody) }},
		{"with whitespace", " {\n \"channel\" : \"a\" ,\t\"channel\"\r: \"b\" } ", func() any { return new(rtm.PublishBody) }},
		{"escaped twin", `{"channel":"a","\u0063hannel":"b","message":1}`, func() any { return new(rtm.PublishBody) }},
		{"unknown key twice", `{"channel":"a","x":1,"x":2,"message":1}`, func() any { return new(rtm.PublishBody) }},
		{"in a message", `{"channel":"a","message":{"who":"zebra","who":"lion"}}`, func() any { return new(rtm.PublishBody) }},
		{"in a nested message", `{"channel":"a","message":[1,{"a":{"b":1,"b":2}}]}`, func() any { return new(rtm.PublishBody) }},
		{"in a large map", many, func() any { return new(rtm.PublishBody) }},
		{"subscribe history", `{"channel":"a","history":{"count":1,"count":9}}`, func() any { return new(rtm.SubscribeBody) }},
		{"handshake", `{"method":"role_secret","method":"jwt"}`, func() any { return new(rtm.HandshakeBody) }},
		{"into a map", `{"a":1,"a":2}`, func() any { return new(map[string]any) }},
	}
	for _, tc := range bodies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := c.DecodeBody([]byte(tc.body), tc.into())
			codectest.WantCode(t, err, rtm.CodeInvalidFormat)
			if e, _ := rtm.AsError(err); e.Reason != "body has a key twice" {
				t.Fatalf("reason %q, want %q", e.Reason, "body has a key twice")
			}
		})
	}
	// The same names in different objects are no duplicates.
	var ok rtm.PublishBody
	if err := c.DecodeBody([]byte(`{"channel":"a","message":{"channel":{"channel":1},"x":[{"x":1},{"x":2}]}}`), &ok); err != nil {
		t.Fatalf("keys repeated in separate objects refused: %v", err)
	}
}
