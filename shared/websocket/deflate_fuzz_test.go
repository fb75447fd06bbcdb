//go:build !js

package websocket

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzInflate inflates arbitrary bytes as a compressed message's payload
// and compares the outcome with compress/flate's own reader on the same
// bytes and tail: the same output when both succeed; never more than the
// limit (and its buffer never far past it) when the message is too big;
// an error only when the reference fails too, or when bytes follow a
// final block, which the reference ignores.
func FuzzInflate(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x00})
	f.Add(compress(f, []byte(chatJSON)))
	f.Add(compress(f, bytes.Repeat([]byte(chatJSON), 40)))
	f.Add(compress(f, make([]byte, 64<<10))) // inflates past the limit
	f.Add([]byte{0x03, 0x00})                // a final empty block
	f.Add([]byte{0x03, 0x00, 0x00, 0x00, 0xff, 0xff})
	f.Add([]byte{0x00, 0x05, 0x00, 0xfa, 0xff, 'h', 'e', 'l', 'l', 'o'})
	f.Add([]byte{0xff, 0xff, 0xff})
	const limit = 4 << 10
	f.Fuzz(func(t *testing.T, data []byte) {
		z := getInflater()
		defer putInflater(z)
		z.in = append(z.in, data...)
		got, err := z.inflate(nil, limit)

		src := bytes.NewReader(append(bytes.Clone(data), inflateTail...))
		want, refErr := io.ReadAll(io.LimitReader(flate.NewReader(src), limit+1))
		if cap(got) > limit+readStep {
			t.Fatalf("the output buffer grew to %d bytes for a limit of %d", cap(got), limit)
		}
		switch {
		case err == nil:
			if refErr != nil || !bytes.Equal(got, want) {
				t.Fatalf("inflated %d bytes; the reference %d bytes, %v", len(got), len(want), refErr)
			}
		case errors.Is(err, errInflateTooBig):
			if len(got) <= limit || len(want) <= limit || !bytes.HasPrefix(want, got[:limit]) {
				t.Fatalf("too big at %d bytes; the reference inflated %d bytes, %v", len(got), len(want), refErr)
			}
		case errors.Is(err, errInflateCorrupt):
			if refErr == nil && len(want) <= limit && src.Len() <= len(inflateTail) {
				t.Fatalf("corrupt (%v), but the reference inflated %d bytes of it all", err, len(want))
			}
		default:
			t.Fatalf("inflate error %v is neither too big nor corrupt", err)
		}
	})
}

// TestInflateReuse inflates messages one after another with the pooled
// inflaters, a bad one between: no state leaks from one message to the
// next (no context takeover).
func TestInflateReuse(t *testing.T) {
	t.Parallel()
	msgs := []string{chatJSON, strings.Repeat("ab", 300), "", chatJSON}
	for i, m := range msgs {
		for _, in := range [][]byte{{0xff, 0xff}, compress(t, []byte(m))} {
			z := getInflater()
			z.in = append(z.in, in...)
			got, err := z.inflate(nil, 1<<20)
			putInflater(z)
			if in[0] == 0xff {
				if !errors.Is(err, errInflateCorrupt) {
					t.Fatalf("message %d: bad data inflated with %v", i, err)
				}
				continue
			}
			if err != nil || string(got) != m {
				t.Fatalf("message %d: inflated %.40q, %v", i, got, err)
			}
		}
	}
}

// FuzzReadMessageDeflate is FuzzReadMessageClient on a connection that
// negotiated permessage-deflate: the inflating reader behind frames that
// arrive in chunks, with control frames between fragments and RSV1
// where it may and may not be.
func FuzzReadMessageDeflate(f *testing.F) {
	z := compress(f, []byte(chatJSON))
	cat := func(fs ...[]byte) []byte { return bytes.Join(fs, nil) }
	seeds := [][]byte{
		wireFrame(true, 0x40, OpText, false, z),
		cat(wireFrame(false, 0x40, OpBinary, false, z[:7]), wireFrame(true, 0, OpPing, false, []byte("p")),
			wireFrame(true, 0, OpContinuation, false, z[7:])),
		cat(wireFrame(true, 0, OpText, false, []byte("plain")), wireFrame(true, 0x40, OpText, false, z)),
		wireFrame(true, 0x40, OpBinary, false, compress(f, make([]byte, 300))), // inflates past the limit
		cat(wireFrame(false, 0x40, OpText, false, z[:3]), wireFrame(true, 0x40, OpContinuation, false, z[3:])),
		wireFrame(true, 0x40, OpPing, false, nil),
		wireFrame(true, 0x40, OpText, false, []byte{0xff, 0xff}),
	}
	for i, s := range seeds {
		f.Add(byte(i%5), s)
	}
	f.Fuzz(func(t *testing.T, chunk byte, data []byte) {
		if len(data) > maxFuzzInput {
			return
		}
		c, m := fuzzClient(chunk, data)
		c.setDeflate(&DeflateOptions{})
		fuzzRead(t, c, m, true)
	})
}
