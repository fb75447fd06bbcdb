package codectest

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Spec says how one codec reports errors and which frames it must refuse.
type Spec struct {
	Codec codec.Codec
	// ParseCode is the code of a frame that cannot be parsed at all.
	ParseCode rtm.Code
	// Garbage are frames the codec cannot parse.
	Garbage [][]byte
}

// Run runs every conformance test against s.Codec.
func Run(t *testing.T, s Spec) {
	t.Helper()
	t.Run("IDEcho", func(t *testing.T) { t.Parallel(); testIDEcho(t, s.Codec) })
	t.Run("BodyRoundTrip", func(t *testing.T) { t.Parallel(); testBodies(t, s.Codec) })
	t.Run("AbsentBody", func(t *testing.T) { t.Parallel(); testAbsentBody(t, s.Codec) })
	t.Run("NotAPDU", func(t *testing.T) { t.Parallel(); testNotAPDU(t, s.Codec) })
	t.Run("Truncated", func(t *testing.T) { t.Parallel(); testTruncated(t, s) })
	t.Run("Garbage", func(t *testing.T) { t.Parallel(); testGarbage(t, s) })
	t.Run("AppendData", func(t *testing.T) { t.Parallel(); testAppendData(t, s.Codec) })
	t.Run("AppendDataAllocs", func(t *testing.T) { testAppendDataAllocs(t, s.Codec) })
	t.Run("RawValue", func(t *testing.T) { t.Parallel(); testRawValue(t, s.Codec) })
	t.Run("AppendValueErrors", func(t *testing.T) { t.Parallel(); testAppendValueErrors(t, s.Codec) })
	t.Run("Depth", func(t *testing.T) { t.Parallel(); testDepth(t, s.Codec) })
	t.Run("Concurrent", func(t *testing.T) { t.Parallel(); testConcurrent(t, s.Codec) })
}

// WantCode fails t unless err is an *rtm.Error with the given code and a
// reason of package rtm (rtm.IsFormatReason): never a library's text.
func WantCode(t testing.TB, err error, code rtm.Code) {
	t.Helper()
	e, ok := rtm.AsError(err)
	if !ok {
		t.Fatalf("error %v is not an *rtm.Error (want code %s)", err, code)
	}
	if e.Code != code {
		t.Fatalf("error code %s (%q), want %s", e.Code, e.Reason, code)
	}
	if !rtm.IsFormatReason(e.Reason) {
		t.Fatalf("error %s: reason %q is not one of package rtm's", e.Code, e.Reason)
	}
}

// Encode encodes p or fails t.
func Encode(t testing.TB, c codec.Codec, p *rtm.PDU) []byte {
	t.Helper()
	b, err := c.AppendPDU(nil, p)
	if err != nil {
		t.Fatalf("%s AppendPDU(%s): %v", c.Name(), p.Action, err)
	}
	return b
}

// Decode decodes a frame, and its body into v, or fails t.
func Decode(t testing.TB, c codec.Codec, frame []byte, v any) rtm.Envelope {
	t.Helper()
	env, err := c.Decode(frame)
	if err != nil {
		t.Fatalf("%s Decode(%q): %v", c.Name(), frame, err)
	}
	if err := c.DecodeBody(env.Body, v); err != nil {
		t.Fatalf("%s DecodeBody(%q) into %T: %v", c.Name(), env.Body, v, err)
	}
	return env
}

// Value encodes v with AppendValue or fails t.
func Value(t testing.TB, c codec.Codec, v any) []byte {
	t.Helper()
	b, err := c.AppendValue(nil, v)
	if err != nil {
		t.Fatalf("%s AppendValue(%v): %v", c.Name(), v, err)
	}
	return b
}

// Received decodes one encoded message value through a subscription/data
// PDU, as a subscriber receives it.
func Received(t testing.TB, c codec.Codec, enc []byte) any {
	t.Helper()
	var d rtm.SubscriptionData
	Decode(t, c, c.AppendData(nil, "s", rtm.Position{}, [][]byte{enc}), &d)
	if len(d.Messages) != 1 {
		t.Fatalf("%d messages decoded, want 1", len(d.Messages))
	}
	return d.Messages[0]
}

func testIDEcho(t *testing.T, c codec.Codec) {
	ids := []struct {
		name string
		id   rtm.ID
	}{
		{"none", rtm.ID{}},
		{"int 7", rtm.IntID(7)},
		{"string 7", rtm.StringID("7")},
		{"int 0", rtm.IntID(0)},
		{"int -1", rtm.IntID(-1)},
		{"max int64", rtm.IntID(math.MaxInt64)},
		{"min int64", rtm.IntID(math.MinInt64)},
		{"empty string", rtm.StringID("")},
		{"unicode string", rtm.StringID("запрос \"7\"")},
	}
	for _, tc := range ids {
		t.Run(tc.name, func(t *testing.T) {
			req := Encode(t, c, &rtm.PDU{Action: rtm.ActionPublish, ID: tc.id, Body: &rtm.PublishBody{Channel: "c", Message: int64(1)}})
			var body rtm.PublishBody
			env := Decode(t, c, req, &body)
			if env.Action != rtm.ActionPublish || env.ID != tc.id {
				t.Fatalf("decoded action %q id %+v, want %q %+v", env.Action, env.ID, rtm.ActionPublish, tc.id)
			}
			// The reply echoes the id it decoded, with its type.
			reply := Encode(t, c, &rtm.PDU{Action: rtm.Reply(env.Action, rtm.OutcomeOK), ID: env.ID, Body: &rtm.PositionBody{Position: "1:1"}})
			var pos rtm.PositionBody
			if got := Decode(t, c, reply, &pos); got.ID != tc.id || pos.Position != "1:1" {
				t.Fatalf("reply id %+v position %q, want %+v 1:1", got.ID, pos.Position, tc.id)
			}
		})
	}
}

func testBodies(t *testing.T, c codec.Codec) {
	for _, tc := range SamplePDUs() {
		t.Run(tc.Name, func(t *testing.T) {
			frame := Encode(t, c, &rtm.PDU{Action: tc.Action, ID: rtm.IntID(3), Body: tc.Body})
			got := reflect.New(reflect.TypeOf(tc.Body).Elem()).Interface()
			env := Decode(t, c, frame, got)
			if env.Action != tc.Action || env.ID != rtm.IntID(3) {
				t.Fatalf("action %q id %+v, want %q 3", env.Action, env.ID, tc.Action)
			}
			if !reflect.DeepEqual(got, tc.Body) {
				t.Fatalf("body decoded as %#v, want %#v", got, tc.Body)
			}
			// A value body encodes like a pointer body.
			byValue := Encode(t, c, &rtm.PDU{Action: tc.Action, ID: rtm.IntID(3), Body: reflect.ValueOf(tc.Body).Elem().Interface()})
			if !bytes.Equal(byValue, frame) {
				t.Fatalf("body by value encodes as %q, by pointer as %q", byValue, frame)
			}
		})
	}
}

func testAbsentBody(t *testing.T, c codec.Codec) {
	for _, body := range []any{nil, (*rtm.PublishBody)(nil), rtm.Empty{}} {
		frame := Encode(t, c, &rtm.PDU{Action: rtm.ActionAuthenticate, Body: body})
		var m map[string]any
		Decode(t, c, frame, &m)
		if m == nil || len(m) != 0 {
			t.Fatalf("body %#v decodes as %#v, want an empty map", body, m)
		}
	}
	frame := Value(t, c, map[string]any{"action": "rtm/publish", "id": int64(5)})
	var m map[string]any
	env := Decode(t, c, frame, &m)
	if env.Action != rtm.ActionPublish || env.ID != rtm.IntID(5) || m == nil || len(m) != 0 {
		t.Fatalf("PDU without body decodes as %+v body %#v, want an empty map", env, m)
	}
}

func testNotAPDU(t *testing.T, c codec.Codec) {
	body := map[string]any{}
	cases := []struct {
		name string
		pdu  any
	}{
		{"array", []any{"rtm/publish", map[string]any{}}},
		{"string", "rtm/publish"},
		{"null", nil},
		{"no action", map[string]any{"body": body}},
		{"integer action", map[string]any{"action": int64(5), "body": body}},
		{"null action", map[string]any{"action": nil, "body": body}},
		{"fractional id", map[string]any{"action": "a", "id": 1.5, "body": body}},
		{"float id", map[string]any{"action": "a", "id": 7.0, "body": body}},
		{"bool id", map[string]any{"action": "a", "id": true, "body": body}},
		{"null id", map[string]any{"action": "a", "id": nil, "body": body}},
		{"huge id", map[string]any{"action": "a", "id": uint64(math.MaxUint64), "body": body}},
		{"array id", map[string]any{"action": "a", "id": []any{int64(1)}, "body": body}},
		{"array body", map[string]any{"action": "a", "body": []any{}}},
		{"string body", map[string]any{"action": "a", "body": "x"}},
		{"null body", map[string]any{"action": "a", "body": nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Decode(Value(t, c, tc.pdu))
			WantCode(t, err, rtm.CodeInvalidFormat)
		})
	}
}

func testTruncated(t *testing.T, s Spec) {
	frame := Encode(t, s.Codec, &rtm.PDU{Action: rtm.ActionPublish, ID: rtm.StringID("id"), Body: &rtm.PublishBody{
		Channel: "chat", Message: map[string]any{"a": []any{1.5, int64(-300), "ü", []byte{1, 2}}},
	}})
	for n := range len(frame) {
		_, err := s.Codec.Decode(frame[:n])
		WantCode(t, err, s.ParseCode)
	}
}

func testGarbage(t *testing.T, s Spec) {
	for _, g := range s.Garbage {
		_, err := s.Codec.Decode(g)
		WantCode(t, err, s.ParseCode)
	}
}

func testAppendValueErrors(t *testing.T, c codec.Codec) {
	cases := []struct {
		name string
		v    any
	}{
		{"NaN", math.NaN()},
		{"+Inf", math.Inf(1)},
		{"-Inf in a map", map[string]any{"x": math.Inf(-1)}},
		{"integer key", map[any]any{int64(1): "x"}},
		{"nested integer key", []any{map[any]any{"a": int64(1), true: "x"}}},
		{"too deep", Deep(codec.MaxDepth + 1)},
		{"struct", struct{ A int }{1}},
		{"typed slice", []string{"a"}},
	}
	prefix := []byte("prefix")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.AppendValue(prefix, tc.v)
			WantCode(t, err, rtm.CodeInvalidFormat)
			if !bytes.Equal(out, prefix) {
				t.Fatalf("AppendValue returned %q on error, want dst unchanged", out)
			}
			_, err = c.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionPublish, Body: &rtm.PublishBody{Channel: "c", Message: tc.v}})
			WantCode(t, err, rtm.CodeInvalidFormat)
		})
	}
	// Go widths outside the model are accepted and come back canonical.
	in := map[any]any{"i": 7, "i8": int8(-8), "u16": uint16(16), "u": uint(math.MaxUint64), "f": float32(0.5)}
	want := map[string]any{"i": int64(7), "i8": int64(-8), "u16": int64(16), "u": uint64(math.MaxUint64), "f": 0.5}
	if got := Received(t, c, Value(t, c, in)); !reflect.DeepEqual(got, want) {
		t.Fatalf("%#v decodes as %#v, want %#v", in, got, want)
	}
}

// wrap returns enc wrapped in one more array, built from the codec's own
// encoding of a one-element array so it works for every codec.
func wrap(t *testing.T, c codec.Codec, enc []byte) []byte {
	t.Helper()
	arr, one := Value(t, c, []any{"sluice-marker"}), Value(t, c, "sluice-marker")
	i := bytes.Index(arr, one)
	out := append([]byte{}, arr[:i]...)
	out = append(out, enc...)
	return append(out, arr[i+len(one):]...)
}

func testDepth(t *testing.T, c codec.Codec) {
	deepest := Deep(codec.MaxDepth)
	if got := Received(t, c, Value(t, c, deepest)); !reflect.DeepEqual(got, deepest) {
		t.Fatalf("a message %d levels deep decodes as %v", codec.MaxDepth, got)
	}
	frame := c.AppendData(nil, "s", rtm.Position{}, [][]byte{wrap(t, c, Value(t, c, deepest))})
	env, err := c.Decode(frame)
	if err == nil {
		err = c.DecodeBody(env.Body, new(rtm.SubscriptionData))
	}
	WantCode(t, err, rtm.CodeInvalidFormat)

	// Far too deep for any decoder: refused, never a crash.
	enc := Value(t, c, "x")
	for range 5000 {
		enc = wrap(t, c, enc)
	}
	env, err = c.Decode(c.AppendData(nil, "s", rtm.Position{}, [][]byte{enc}))
	if err == nil {
		err = c.DecodeBody(env.Body, new(rtm.SubscriptionData))
	}
	if _, ok := rtm.AsError(err); !ok {
		t.Fatalf("a message 5000 levels deep gave error %v, want an *rtm.Error", err)
	}
}

// testConcurrent exercises the pooled encoders and decoders from many
// goroutines; -race reports any sharing.
func testConcurrent(t *testing.T, c codec.Codec) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				want := &rtm.SubscribeBody{Channel: strings.Repeat("c", g+1), Period: int64(i)}
				frame, err := c.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscribe, Body: want})
				var got rtm.SubscribeBody
				if err == nil {
					var env rtm.Envelope
					if env, err = c.Decode(frame); err == nil {
						err = c.DecodeBody(env.Body, &got)
					}
				}
				if err == nil && !reflect.DeepEqual(&got, want) {
					err = &rtm.Error{Code: "mismatch", Reason: got.Channel}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
