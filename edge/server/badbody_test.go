package server_test

import (
	"context"
	"encoding/hex"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/shared/rtm"
)

// malformed is a request an edge cannot serve as it is.
type malformed struct {
	name string
	pdu  any // a PDU as a value each codec writes; in malformedFrames, the frame
	// reason is what the edge answers (in every codec, for pdu).
	reason string
}

// malformedPDUs are requests every codec can write, each refused for one
// fault, with the same reason in every codec.
func malformedPDUs() []malformed {
	req := func(action string, body any) map[string]any {
		return map[string]any{"action": action, "id": int64(7), "body": body}
	}
	wrong := func(path string, kind rtm.ValueKind) string { return rtm.FieldType(path, kind).Reason }
	return []malformed{
		{"integer channel", req(rtm.ActionPublish, map[string]any{"channel": int64(5), "message": "m"}), wrong("channel", rtm.KindNumber)},
		{"integer read", req(rtm.ActionPublish, map[string]any{"channel": "a", "message": "m", "read": int64(1)}), wrong("read", rtm.KindNumber)},
		{"fractional ttl", req(rtm.ActionWrite, map[string]any{"channel": "a", "message": "m", "ttl": 1.5}), wrong("ttl", rtm.KindNumber)},
		{"ttl out of range", req(rtm.ActionWrite, map[string]any{"channel": "a", "message": "m", "ttl": uint64(math.MaxUint64)}),
			wrong("ttl", rtm.KindOutOfRange)},
		{"string purge", req(rtm.ActionDelete, map[string]any{"channel": "a", "purge": "yes"}), wrong("purge", rtm.KindString)},
		{"map position", req(rtm.ActionRead, map[string]any{"channel": "a", "position": map[string]any{}}), wrong("position", rtm.KindMap)},
		{"string history", req(rtm.ActionSubscribe, map[string]any{"channel": "a", "history": "x"}), wrong("history", rtm.KindString)},
		{"string count", req(rtm.ActionSubscribe, map[string]any{"channel": "a", "history": map[string]any{"count": "ten"}}),
			wrong("history.count", rtm.KindString)},
		{"string force", req(rtm.ActionSubscribe, map[string]any{"channel": "a", "force": "yes"}), wrong("force", rtm.KindString)},
		{"array subscription id", req(rtm.ActionUnsubscribe, map[string]any{"subscription_id": []any{}}), wrong("subscription_id", rtm.KindArray)},
		{"string limit", req(rtm.ActionPresence, map[string]any{"channel": "a", "limit": "x"}), wrong("limit", rtm.KindString)},
		{"bool data", req(rtm.ActionHandshake, map[string]any{"method": "role_secret", "data": true}), wrong("data", rtm.KindBool)},
		{"integer role", req(rtm.ActionHandshake, map[string]any{"method": "role_secret", "data": map[string]any{"role": int64(1)}}),
			wrong("data.role", rtm.KindNumber)},
		{"integer credentials", req(rtm.ActionAuthenticate, map[string]any{"method": "jwt", "credentials": int64(5)}),
			wrong("credentials", rtm.KindNumber)},
		{"body not a map", req(rtm.ActionPublish, []any{"a"}), string(rtm.PDUBodyType)},
		{"PDU not a map", []any{rtm.ActionPublish}, string(rtm.PDUNotMap)},
		{"integer action", map[string]any{"action": int64(1), "id": int64(7)}, string(rtm.PDUActionType)},
		{"no action", map[string]any{"id": int64(7), "body": map[string]any{}}, string(rtm.PDUNoAction)},
		{"fractional id", map[string]any{"action": rtm.ActionRead, "id": 1.5, "body": map[string]any{"channel": "a"}}, string(rtm.PDUIDType)},
	}
}

// malformedFrames are frames of one codec's own, in hex (JSON as text),
// refused for what only that codec can write: bytes that are not the
// format, keys given twice, strings that are not UTF-8, NaN.
var malformedFrames = map[string][]malformed{
	"json": {
		{"not JSON", "not json", rtm.NotValid(rtm.PartFrame, rtm.FormatJSON, rtm.FlawUnknown).Reason},
		{"truncated", `{"action":"rtm/publish","id":7,"bo`, rtm.NotValid(rtm.PartFrame, rtm.FormatJSON, rtm.FlawTruncated).Reason},
		{"not UTF-8", "{\"action\":\"rtm/publish\",\"id\":7,\"body\":{\"channel\":\"a\xff\"}}", rtm.NotValid(rtm.PartFrame, rtm.FormatJSON, rtm.FlawUTF8).Reason},
		{"key twice", `{"action":"rtm/publish","id":7,"body":{"channel":"a","channel":"b","message":1}}`, string(rtm.BodyKeyTwice)},
		{"number out of range", `{"action":"rtm/publish","id":7,"body":{"channel":"a","message":1e400}}`, string(rtm.MessageNumber)},
	},
	"cbor": {
		{"truncated", "a3666163", rtm.NotValid(rtm.PartFrame, rtm.FormatCBOR, rtm.FlawTruncated).Reason},
		{"indefinite length", "bf66616374696f6e6b72746d2f7075626c697368ff", rtm.NotValid(rtm.PartFrame, rtm.FormatCBOR, rtm.FlawIndefinite).Reason},
		{"tag", "a366616374696f6e6b72746d2f7075626c6973686269640764626f6479a16763" + "68616e6e656cc101", rtm.NotValid(rtm.PartFrame, rtm.FormatCBOR, rtm.FlawTag).Reason},
		{"key twice", "a366616374696f6e6b72746d2f7075626c6973686269640764626f6479a2676368616e6e656c6161676368616e6e656c6162",
			string(rtm.BodyKeyTwice)},
	},
	"msgpack": {
		{"reserved byte", "c1", rtm.NotValid(rtm.PartFrame, rtm.FormatMsgpack, rtm.FlawReserved).Reason},
		{"truncated", "83a6616374696f6eab72746d2f7075", rtm.NotValid(rtm.PartFrame, rtm.FormatMsgpack, rtm.FlawTruncated).Reason},
		{"extension", msgpackPublish("81a76d657373616765d6ff00000001"), rtm.NotValid(rtm.PartFrame, rtm.FormatMsgpack, rtm.FlawExtension).Reason},
		{"key twice", msgpackPublish("82a76368616e6e656ca161a76368616e6e656ca162"), string(rtm.BodyKeyTwice)},
		{"binary not UTF-8", msgpackPublish("82a76368616e6e656cc401ffa76d65737361676501"), string(rtm.BodyNotUTF8)},
		{"NaN", msgpackPublish("82a76368616e6e656ca161a76d657373616765cb7ff8000000000001"), string(rtm.MessageNonFinite)},
		{"integer key", msgpackPublish("820101a76368616e6e656ca161"), string(rtm.BodyKeyType)},
		{"integer key in a message", msgpackPublish("82a76368616e6e656ca161a76d657373616765810101"), string(rtm.MessageKeyType)},
	},
}

// msgpackPublish is the hex of an rtm/publish with id 7 and body, in hex.
func msgpackPublish(body string) string {
	return "83a6616374696f6eab72746d2f7075626c697368a2696407a4626f6479" + body
}

// TestMalformedRequestsGetRTMReasons sends malformed requests in every
// codec over a real connection: each is refused with invalid_format or the
// codec's parse error and a reason of package rtm, never a decoder's or a
// library's text, the same reason in every codec for what every codec can
// write; and the connection serves the next request.
func TestMalformedRequestsGetRTMReasons(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Limits.RequestsPerSecond = 1 << 30 })
	for _, cd := range allCodecs {
		t.Run(cd.Name(), func(t *testing.T) {
			t.Parallel()
			c := e.dialCodec(t, cd)
			for _, m := range malformedPDUs() {
				frame, err := cd.AppendValue(nil, m.pdu)
				if err != nil {
					t.Fatalf("%s: encode: %v", m.name, err)
				}
				checkRefused(t, c, m, frame)
			}
			for _, m := range malformedFrames[cd.Name()] {
				frame := []byte(m.pdu.(string))
				if cd.Binary() {
					var err error
					if frame, err = hex.DecodeString(m.pdu.(string)); err != nil {
						t.Fatal(err)
					}
				}
				checkRefused(t, c, m, frame)
			}
		})
	}
}

// checkRefused sends frame, fails t unless the edge refuses it as m says,
// and checks that the connection still serves a request.
func checkRefused(t *testing.T, c *codecClient, m malformed, frame []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, frameType(c.codec), frame); err != nil {
		t.Fatalf("%s: write: %v", m.name, err)
	}
	env := c.recv()
	var eb rtm.ErrorBody
	if err := c.codec.DecodeBody(env.Body, &eb); err != nil {
		t.Fatalf("%s: the edge's answer %s does not decode: %v", m.name, env.Action, err)
	}
	if !isErrorAction(env.Action) || !formatCode(eb.Error) || !rtm.IsFormatReason(eb.Reason) {
		t.Errorf("%s: answered %s %s %q, want an error with a reason of package rtm", m.name, env.Action, eb.Error, eb.Reason)
	}
	if eb.Reason != m.reason {
		t.Errorf("%s: reason %q, want %q", m.name, eb.Reason, m.reason)
	}
	c.call(rtm.ActionRead, &rtm.ReadBody{Channel: "z"}, nil)
}

// isErrorAction reports whether action is a reply's error or the /error
// of a frame that does not decode.
func isErrorAction(action string) bool {
	return action == rtm.ActionError || strings.HasSuffix(action, "/"+rtm.OutcomeError)
}

// formatCode reports whether code is what a codec refuses a frame with.
func formatCode(code string) bool {
	switch rtm.Code(code) {
	case rtm.CodeInvalidFormat, rtm.CodeJSONParseError, rtm.CodeCBORParseError:
		return true
	}
	return false
}
