package payload

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// payloadValues are values of the canonical model, one of each kind and
// the edges of the numbers.
var payloadValues = []any{
	nil, true, false, int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64),
	uint64(math.MaxUint64), 1.5, -2.25e-10, math.MaxFloat64, "", "héllo ✓ 日本",
	[]byte{}, []byte{0, 1, 0xfe, 0xff}, []any{}, []any{int64(1), "two", nil, []byte("b")},
	map[string]any{}, map[string]any{"nested": map[string]any{"a": []any{true, 1.25}}, "k": "v", "": nil},
}

// TestPayloadTranscodes: whatever codecs a payload holds, every codec reads
// the same bytes as if the payload held its encoding: a reader in a codec
// the publisher left out gets exactly what it would have got.
func TestPayloadTranscodes(t *testing.T) {
	for _, v := range payloadValues {
		want := make([][]byte, NumCodecs)
		for i, c := range codecs {
			b, err := c.AppendValue(nil, v)
			if err != nil {
				t.Fatalf("%s: encode %#v: %v", c.Name(), v, err)
			}
			want[i] = b
		}
		for in := range NumCodecs {
			for m := range AllCodecs + 1 {
				mask := m | Mask(1)<<Carrier | Mask(1)<<in
				p, size, err := Encode([]byte("prefix"), v, in, mask)
				if err != nil {
					t.Fatalf("Encode(%#v, %s, %03b): %v", v, codecs[in].Name(), mask, err)
				}
				if size != len(want[in]) {
					t.Errorf("Encode(%#v, %s): size %d, want %d", v, codecs[in].Name(), size, len(want[in]))
				}
				p = p[len("prefix"):]
				for i, c := range codecs {
					stored, err := Encoding(p, i)
					if err != nil {
						t.Fatal(err)
					}
					if held := mask&(1<<i) != 0; held != (len(stored) > 0) {
						t.Errorf("%#v in %03b: %s held %v, want %v", v, mask, c.Name(), len(stored) > 0, held)
					}
					got, err := In(p, i)
					if err != nil {
						t.Fatalf("%#v in %03b: read as %s: %v", v, mask, c.Name(), err)
					}
					if !bytes.Equal(got, want[i]) {
						t.Errorf("%#v in %03b: read as %s: %x, want %x", v, mask, c.Name(), got, want[i])
					}
				}
			}
		}
	}
}

// TestPayloadSmallerWithFewerCodecs: a payload in the Carrier alone is
// about a third of one in every codec.
func TestPayloadSmallerWithFewerCodecs(t *testing.T) {
	msg := map[string]any{"user": "ada", "text": fmt.Sprintf("%0100d", 7), "n": int64(12)}
	one, _, err := Encode(nil, msg, Carrier, Mask(1)<<Carrier)
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := Encode(nil, msg, Carrier, AllCodecs)
	if err != nil {
		t.Fatal(err)
	}
	if 2*len(one) > len(all) {
		t.Fatalf("payload in msgpack alone %d bytes, in all codecs %d: want under half", len(one), len(all))
	}
}

// TestPayloadCorrupt: a payload whose header lies, or whose Carrier is
// missing or broken, is an error, not a panic or a wrong message.
func TestPayloadCorrupt(t *testing.T) {
	good, _, err := Encode(nil, "x", Carrier, Mask(1)<<Carrier)
	if err != nil {
		t.Fatal(err)
	}
	noCarrier := bytes.Clone(good[:headerSize])
	clear(noCarrier)
	broken := bytes.Clone(good)
	broken[len(broken)-2] = 0xc1 // a msgpack byte that is never used
	for name, p := range map[string][]byte{
		"short":      good[:headerSize-1],
		"truncated":  good[:len(good)-1],
		"no Carrier": noCarrier,
		"broken":     broken,
	} {
		if _, err := In(p, 0); err == nil {
			t.Errorf("%s: read as %s: no error", name, codecs[0].Name())
		}
	}
}

// FuzzPayload reads arbitrary bytes as a stored payload in every codec:
// an error or an encoding, never a panic.
func FuzzPayload(f *testing.F) {
	for _, v := range payloadValues {
		p, _, err := Encode(nil, v, Carrier, Mask(1)<<Carrier)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		for i := range NumCodecs {
			if b, err := In(p, i); err == nil && len(b) == 0 {
				t.Fatalf("read as %s: no error and no encoding", codecs[i].Name())
			}
		}
	})
}

// TestUsageLinger: a publish encodes the carrier, the publisher's codec
// and every codec with a connection open, or whose last one closed less
// than Linger ago.
func TestUsageLinger(t *testing.T) {
	if codecs[Carrier].Name() != "msgpack" {
		t.Fatalf("the carrier is %s, want msgpack", codecs[Carrier].Name())
	}
	now := time.Unix(1_700_000_000, 0).UnixNano()
	u := NewUsage(func() int64 { return now })
	advance := func(d time.Duration) { now += int64(d) }
	_, js := CodecFor("json")
	_, cb := CodecFor("cbor")
	check := func(when string, want Mask) {
		t.Helper()
		if got := u.Codecs(cb); got != want|1<<Carrier|1<<cb {
			t.Fatalf("%s: codecs %03b, want %03b", when, got, want|1<<Carrier|1<<cb)
		}
	}
	check("no JSON connection yet", 0)
	u.Opened(js)
	u.Opened(js)
	check("two JSON connections", 1<<js)
	u.Closed(js)
	advance(time.Hour)
	check("one JSON connection left", 1<<js)
	u.Closed(js)
	advance(time.Minute - time.Nanosecond)
	check("the last JSON connection closed a minute ago less 1ns", 1<<js)
	advance(time.Nanosecond)
	check("the last JSON connection closed a minute ago", 0)
	if n := u.Open(js); n != 0 {
		t.Fatalf("%d JSON connections open, want 0", n)
	}
}
