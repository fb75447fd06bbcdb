package stream

import (
	"bytes"
	"errors"
	"testing"
)

// frames splits client frames back into their payloads.
func frames(t testing.TB, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		// Client frames carry a 4-byte key after the length.
		f, n, err := nextFrame(unmaskHeader(b))
		if err != nil || n == 0 {
			t.Fatalf("bad client frames: %v", err)
		}
		out = append(out, bytes.Clone(f.payload))
		b = b[n+4:]
	}
	return out
}

// unmaskHeader returns b with its first frame's mask bit and key
// removed, so nextFrame (which reads a server's frames) parses it.
func unmaskHeader(b []byte) []byte {
	hl := 2
	switch b[1] & 0x7F {
	case 126:
		hl = 4
	case 127:
		hl = 10
	}
	out := append([]byte{}, b[:hl]...)
	out[1] &^= 0x80
	return append(out, b[hl+4:]...)
}

func TestDecodeBody(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("x"), 70000)
	tests := []struct {
		name   string
		body   []byte
		binary bool
		want   []string
		err    error
	}{
		{name: "json lines", body: []byte("{\"a\":1}\r\n\n{\"b\":2}"), want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "json empty", body: []byte("\n \n"), want: nil},
		{name: "json too large", body: append(big, '\n'), err: ErrPDUTooLarge},
		{name: "binary two", body: []byte{0, 0, 0, 1, 'a', 0, 0, 0, 2, 'b', 'c'}, binary: true, want: []string{"a", "bc"}},
		{name: "binary empty PDU", body: []byte{0, 0, 0, 0}, binary: true, want: []string{""}},
		{name: "binary short length", body: []byte{0, 0, 1}, binary: true, err: ErrBodyTruncated},
		{name: "binary short PDU", body: []byte{0, 0, 0, 5, 'a'}, binary: true, err: ErrBodyTruncated},
		{name: "binary too large", body: []byte{0xff, 0xff, 0xff, 0xff}, binary: true, err: ErrPDUTooLarge},
		{name: "too many", body: bytes.Repeat([]byte("1\n"), MaxBodyPDUs+1), err: ErrBodyTooMany},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeBody(tt.body, tt.binary, 65536)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			var texts []string
			for _, p := range frames(t, got) {
				texts = append(texts, string(p))
			}
			if len(texts) != len(tt.want) {
				t.Fatalf("got %q, want %q", texts, tt.want)
			}
			for i := range texts {
				if texts[i] != tt.want[i] {
					t.Fatalf("got %q, want %q", texts, tt.want)
				}
			}
		})
	}
}

// FuzzDecodeBody checks that any body either is refused or splits into
// frames whose payloads put back together are the body's PDUs.
func FuzzDecodeBody(f *testing.F) {
	f.Add([]byte("{\"action\":\"rtm/publish\"}\n{}"), false)
	f.Add([]byte{0, 0, 0, 1, 'a', 0, 0, 0, 2, 'b', 'c'}, true)
	f.Add([]byte{0, 0, 0, 200, 1}, true)
	f.Fuzz(func(t *testing.T, body []byte, binary bool) {
		got, err := DecodeBody(body, binary, 1024)
		if err != nil {
			return
		}
		total := 0
		for _, p := range frames(t, got) {
			if len(p) > 1024 {
				t.Fatalf("a PDU of %d bytes passed a limit of 1024", len(p))
			}
			if !bytes.Contains(body, p) {
				t.Fatalf("PDU %q is not in the body", p)
			}
			total += len(p)
		}
		if total > len(body) {
			t.Fatalf("%d bytes of PDUs from a body of %d", total, len(body))
		}
	})
}
