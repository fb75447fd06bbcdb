//go:build !js

package msgpack_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

// dataAction is "action": "rtm/subscription/data", in hex.
const dataAction = action + "b5" + "72746d2f737562736372697074696f6e2f64617461"

// dataFrames are pushes as the edge sends them, which DecodeData must
// read itself.
func dataFrames(t testing.TB) [][]byte {
	t.Helper()
	msgs := []any{nil, true, int64(-1), int64(math.MinInt64), uint64(math.MaxUint64), 1.5, "", "ü", []byte{}, []byte{1},
		[]any{}, map[string]any{}, codectest.Message(), codectest.Deep(codec.MaxDepth)}
	var frames [][]byte
	for _, id := range []string{"", "chat", strings.Repeat("é", 40)} {
		for _, pos := range []rtm.Position{{}, {Epoch: 1, Offset: 2}, {Epoch: math.MaxUint64, Offset: math.MaxUint64}} {
			encoded := make([][]byte, 0, len(msgs))
			for _, m := range msgs {
				b, err := c.AppendValue(nil, m)
				if err != nil {
					t.Fatal(err)
				}
				encoded = append(encoded, b)
				frames = append(frames, c.AppendData(nil, id, pos, encoded[len(encoded)-1:]))
			}
			frames = append(frames, c.AppendData(nil, id, pos, encoded), c.AppendData(nil, id, pos, nil))
		}
	}
	return frames
}

// dataRefused are frames DecodeData leaves to Decode and DecodeBody,
// whether or not they read them.
var dataRefused = map[string]string{
	"another action":       "82" + actionA + body + "83" + subID + "a131" + position + "a3313a32" + messages + "90",
	"with an id":           "83" + dataAction + id + "01" + body + "83" + subID + "a131" + position + "a3313a32" + messages + "90",
	"an unknown body key":  "82" + dataAction + body + "84" + subID + "a131" + position + "a3313a32" + messages + "90" + "a178c0",
	"a key given twice":    "82" + dataAction + body + "83" + subID + "a131" + subID + "a132" + messages + "90",
	"binary id":            "82" + dataAction + body + "83" + subID + "c40131" + position + "a3313a32" + messages + "90",
	"nil messages":         "82" + dataAction + body + "83" + subID + "a131" + position + "a3313a32" + messages + "c0",
	"bad position":         "82" + dataAction + body + "83" + subID + "a131" + position + "a3313a78" + messages + "90",
	"a NaN message":        "82" + dataAction + body + "83" + subID + "a131" + position + "a3313a32" + messages + "91" + nan,
	"trailing byte":        "82" + dataAction + body + "83" + subID + "a131" + position + "a3313a32" + messages + "90" + "c0",
	"truncated":            "82" + dataAction + body + "83" + subID + "a131" + position + "a3313a32" + messages + "91",
	"invalid UTF-8 string": "82" + dataAction + body + "83" + subID + "a1ff" + position + "a3313a32" + messages + "90",
}

// TestDecodeData: DecodeData reads every push the edge sends, exactly as
// Decode and DecodeBody do, and leaves the rest to them.
func TestDecodeData(t *testing.T) {
	t.Parallel()
	for _, f := range dataFrames(t) {
		var d codec.Data
		if !c.DecodeData(f, &d) {
			t.Fatalf("DecodeData(%x) left a frame of the edge's to the long way", f)
		}
		sameAsLongWay(t, f, &d)
	}
	for name, h := range dataRefused {
		f := unhex(t, h)
		if c.DecodeData(f, new(codec.Data)) {
			t.Errorf("%s: DecodeData(%s) read it", name, h)
		}
	}
	// Keys body first, action second, are the edge's too.
	f := unhex(t, "82"+body+"83"+subID+"a131"+position+"a3313a32"+messages+"9101"+dataAction)
	var d codec.Data
	if !c.DecodeData(f, &d) {
		t.Fatal("DecodeData did not read a frame with body before action")
	}
	sameAsLongWay(t, f, &d)
}

// TestDecodeDataKeepsID: a push naming the subscription already in d
// keeps its string, and reading one message costs the message itself and
// its slice: the id and position allocate nothing.
func TestDecodeDataKeepsID(t *testing.T) { // not parallel: it counts allocations
	m, err := c.AppendValue(nil, strings.Repeat("m", 128))
	if err != nil {
		t.Fatal(err)
	}
	f := c.AppendData(nil, "chat", rtm.Position{Epoch: 12345, Offset: 67890}, [][]byte{m})
	var d codec.Data
	if !c.DecodeData(f, &d) {
		t.Fatal("DecodeData refused a push")
	}
	id := d.SubscriptionID
	allocs := testing.AllocsPerRun(100, func() {
		if !c.DecodeData(f, &d) {
			t.Fatal("DecodeData refused a push")
		}
	})
	if d.SubscriptionID != "chat" || d.Position != (rtm.Position{Epoch: 12345, Offset: 67890}) {
		t.Fatalf("read %+v", d)
	}
	if unsafe.StringData(id) != unsafe.StringData(d.SubscriptionID) {
		t.Fatal("DecodeData made a new string for the same subscription id")
	}
	// The slice, the string's bytes and the string boxed in an any.
	if allocs > 3 {
		t.Fatalf("DecodeData allocated %.0f times per push, want at most 3", allocs)
	}
}

// FuzzDecodeData: whatever DecodeData reads, Decode and DecodeBody read
// the same.
func FuzzDecodeData(f *testing.F) {
	for _, fr := range dataFrames(f) {
		f.Add(fr)
	}
	for _, h := range dataRefused {
		f.Add(unhex(f, h))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var d codec.Data
		if c.DecodeData(frame, &d) {
			sameAsLongWay(t, frame, &d)
		}
	})
}

// sameAsLongWay fails t unless Decode and DecodeBody read frame as a push
// of d's subscription, position and messages.
func sameAsLongWay(t testing.TB, frame []byte, d *codec.Data) {
	t.Helper()
	env, err := c.Decode(frame)
	if err != nil {
		t.Fatalf("DecodeData read %x, Decode refused it: %v", frame, err)
	}
	if env.Action != rtm.ActionSubscriptionData || env.ID.Kind != rtm.IDNone {
		t.Fatalf("DecodeData read %x, Decode says %s id %+v", frame, env.Action, env.ID)
	}
	var want rtm.SubscriptionData
	if err := c.DecodeBody(env.Body, &want); err != nil {
		t.Fatalf("DecodeData read %x, DecodeBody refused it: %v", frame, err)
	}
	pos, err := rtm.ParsePosition(want.Position)
	if err != nil || pos != d.Position || want.SubscriptionID != d.SubscriptionID || !reflect.DeepEqual(want.Messages, d.Messages) {
		t.Fatalf("%x: DecodeData %+v, the long way %+v", frame, *d, want)
	}
}

// BenchmarkDecodeData reads a push of one 128-byte string as a client
// does: in one pass with DecodeData, and the long way (Decode, DecodeBody
// and parsing the position) that DecodeData saves.
func BenchmarkDecodeData(b *testing.B) {
	m, err := c.AppendValue(nil, strings.Repeat("m", 128))
	if err != nil {
		b.Fatal(err)
	}
	frame := c.AppendData(nil, "chat", rtm.Position{Epoch: 12345, Offset: 67890}, [][]byte{m})
	b.Run("OnePass", func(b *testing.B) {
		var d codec.Data
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			if !c.DecodeData(frame, &d) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("LongWay", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			env, err := c.Decode(frame)
			if err != nil {
				b.Fatal(err)
			}
			var d rtm.SubscriptionData
			if err := c.DecodeBody(env.Body, &d); err != nil {
				b.Fatal(err)
			}
			if _, err := rtm.ParsePosition(d.Position); err != nil {
				b.Fatal(err)
			}
		}
	})
}
