package codectest

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Messages returns n varied canonical messages.
func Messages(n int) []any {
	msgs := make([]any, n)
	for i := range msgs {
		switch i % 4 {
		case 0:
			msgs[i] = Message()
		case 1:
			msgs[i] = fmt.Sprintf("message %d", i)
		case 2:
			msgs[i] = int64(i) * -1000
		default:
			msgs[i] = []any{1.25, nil, false, map[string]any{}}
		}
	}
	return msgs
}

// EncodeAll encodes every message with AppendValue.
func EncodeAll(t testing.TB, c codec.Codec, msgs []any) [][]byte {
	t.Helper()
	enc := make([][]byte, len(msgs))
	for i, m := range msgs {
		enc[i] = Value(t, c, m)
	}
	return enc
}

func testAppendData(t *testing.T, c codec.Codec) {
	cases := []struct {
		name  string
		subID string
		pos   rtm.Position
		msgs  []any
	}{
		{"no messages", "s", rtm.Position{Epoch: 1, Offset: 2}, []any{}},
		{"one message", "chat", rtm.Position{Epoch: 7, Offset: 100}, Messages(1)},
		{"sixteen messages", "chat", rtm.Position{Epoch: 7, Offset: 116}, Messages(16)},
		{"seventeen messages", "chat", rtm.Position{Epoch: 7, Offset: 117}, Messages(17)},
		{"300 messages", "chat", rtm.Position{Epoch: 7, Offset: 400}, Messages(300)},
		{"largest position", "s", rtm.Position{Epoch: math.MaxUint64, Offset: math.MaxUint64}, Messages(2)},
		{"zero position", "s", rtm.Position{}, Messages(2)},
		{"31-byte position", "s", rtm.Position{Epoch: 123456789012345, Offset: 123456789012345}, Messages(1)},
		{"escaped id", "quote\" back\\ nl\n tab\t nul\x00 \u2028 ü 😀", rtm.Position{Epoch: 1, Offset: 2}, Messages(3)},
		{"long id", strings.Repeat("ab", 150), rtm.Position{Epoch: 1, Offset: 2}, Messages(1)},
		{"very long id", strings.Repeat("ü", 40000), rtm.Position{Epoch: 1, Offset: 2}, Messages(1)},
		{"empty id", "", rtm.Position{Epoch: 1, Offset: 2}, Messages(1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enc := EncodeAll(t, c, tc.msgs)
			prefix := []byte("prefix")
			frame := c.AppendData(bytes.Clone(prefix), tc.subID, tc.pos, enc)
			if !bytes.HasPrefix(frame, prefix) {
				t.Fatalf("AppendData overwrote dst: %q", frame)
			}
			frame = frame[len(prefix):]
			var got rtm.SubscriptionData
			env := Decode(t, c, frame, &got)
			want := rtm.SubscriptionData{SubscriptionID: tc.subID, Position: tc.pos.String(), Messages: tc.msgs}
			if env.Action != rtm.ActionSubscriptionData || !env.ID.IsZero() {
				t.Fatalf("decoded action %q id %+v, want %q and no id", env.Action, env.ID, rtm.ActionSubscriptionData)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %#v, want %#v", got, want)
			}
			// Splicing pre-encoded messages gives the very bytes of the
			// typed body.
			typed := Encode(t, c, &rtm.PDU{Action: rtm.ActionSubscriptionData, Body: &want})
			if !bytes.Equal(typed, frame) {
				t.Fatalf("AppendData wrote\n%q\nAppendPDU wrote\n%q", frame, typed)
			}
		})
	}
}

// testRawValue checks that a stored message, already encoded, is spliced
// into a reply exactly as if it had been encoded there.
func testRawValue(t *testing.T, c codec.Codec) {
	msg := Message()
	enc := Value(t, c, msg)
	raw := Encode(t, c, &rtm.PDU{Action: "rtm/read/ok", ID: rtm.IntID(1), Body: &rtm.ReadReply{Position: "1:2", Message: rtm.RawValue(enc)}})
	typed := Encode(t, c, &rtm.PDU{Action: "rtm/read/ok", ID: rtm.IntID(1), Body: &rtm.ReadReply{Position: "1:2", Message: msg}})
	if !bytes.Equal(raw, typed) {
		t.Fatalf("raw message encodes as %q, the value as %q", raw, typed)
	}
	var got rtm.ReadReply
	Decode(t, c, raw, &got)
	if !reflect.DeepEqual(got.Message, any(msg)) {
		t.Fatalf("raw message decoded as %#v, want %#v", got.Message, msg)
	}
	data := Encode(t, c, &rtm.PDU{Action: rtm.ActionSubscriptionData, Body: &rtm.SubscriptionData{
		SubscriptionID: "s", Position: "1:3", Messages: []any{rtm.RawValue(enc), msg},
	}})
	if spliced := c.AppendData(nil, "s", rtm.Position{Epoch: 1, Offset: 3}, [][]byte{enc, enc}); !bytes.Equal(data, spliced) {
		t.Fatalf("raw messages in a typed body encode as %q, spliced as %q", data, spliced)
	}
	if got := Received(t, c, Value(t, c, rtm.RawValue(nil))); got != nil {
		t.Fatalf("an empty raw value decodes as %#v, want nil", got)
	}
}

func testAppendDataAllocs(t *testing.T, c codec.Codec) {
	enc := EncodeAll(t, c, Messages(16))
	pos := rtm.Position{Epoch: 12345, Offset: 67890}
	dst := c.AppendData(nil, "subscription", pos, enc)
	allocs := testing.AllocsPerRun(100, func() {
		dst = c.AppendData(dst[:0], "subscription", pos, enc)
	})
	if allocs != 0 {
		t.Fatalf("AppendData allocates %v times per call, want 0", allocs)
	}
	msg := Message()
	buf, _ := c.AppendValue(nil, msg)
	allocs = testing.AllocsPerRun(100, func() {
		buf, _ = c.AppendValue(buf[:0], msg)
	})
	if allocs != 0 {
		t.Fatalf("AppendValue allocates %v times per call, want 0", allocs)
	}
	reply := &rtm.PDU{Action: "rtm/read/ok", ID: rtm.IntID(1), Body: &rtm.ReadReply{Position: "1:2", Message: rtm.RawValue(buf)}}
	out := Encode(t, c, reply)
	allocs = testing.AllocsPerRun(100, func() {
		out, _ = c.AppendPDU(out[:0], reply)
	})
	if allocs != 0 {
		t.Fatalf("AppendPDU of a read reply allocates %v times per call, want 0", allocs)
	}
}
