package journal

import (
	"bytes"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestSwitchHeaderRoundTrip(t *testing.T) {
	for _, sw := range []deadSwitch{{ttl: 1, message: []byte(`"dead"`)}, {ttl: 86400, message: []byte{0x81, 0xa1, 'a', 0xc0, '\n', ' '}}, {ttl: 7}} {
		h := nats.Header{}
		sw.set(h)
		ttl, msg, ok := parseSwitch(h.Get(SwitchHeader))
		if !ok || ttl != sw.ttl || !bytes.Equal(msg, sw.message) {
			t.Errorf("switch %+v came back as %d %q %v", sw, ttl, msg, ok)
		}
	}
	if armed(0, []byte("x")) != nil {
		t.Error("a ttl of 0 armed a switch")
	}
	for _, v := range []string{"", "5", "x AAAA", "0 AAAA", "-1 AAAA", "5 !!!", "5  AAAA", "604801 AAAA", "99999999999999 AAAA"} {
		if ttl, msg, ok := parseSwitch(v); ok {
			t.Errorf("parseSwitch(%q) = %d %q, want refused", v, ttl, msg)
		}
	}
}

// FuzzParseSwitch: what the feed reads as a switch, written by the
// publisher, reads back the same (the writer's form is canonical; the
// reader takes the non-canonical ones too, as "01" for 1), and no value
// makes it panic.
func FuzzParseSwitch(f *testing.F) {
	for _, s := range []string{"1 ImRlYWQi", "86400 ", "3 gaFhwA==", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ttl, msg, ok := parseSwitch(v)
		if !ok {
			return
		}
		h := nats.Header{}
		(&deadSwitch{ttl: ttl, message: msg}).set(h)
		ttl2, msg2, ok := parseSwitch(h.Get(SwitchHeader))
		if !ok || ttl2 != ttl || !bytes.Equal(msg2, msg) {
			t.Fatalf("parseSwitch(%q) = %d %q, written as %q, read back as %d %q %v", v, ttl, msg, h.Get(SwitchHeader), ttl2, msg2, ok)
		}
	})
}
