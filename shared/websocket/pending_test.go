//go:build !js

package websocket

import (
	"bufio"
	"bytes"
	"testing"
)

// bufferedConn is a connection whose reader has data buffered, as if
// it had arrived in one read.
func bufferedConn(t testing.TB, data []byte) *Conn {
	t.Helper()
	br := bufio.NewReaderSize(bytes.NewReader(data), 1<<16)
	if len(data) > 0 {
		if _, err := br.Peek(len(data)); err != nil {
			t.Fatalf("buffer %d bytes: %v", len(data), err)
		}
	}
	return newConn(nil, br, true, "")
}

func TestMessagePending(t *testing.T) {
	t.Parallel()
	f := func(fin bool, op Opcode, p string) []byte { return wireFrame(fin, 0, op, false, []byte(p)) }
	masked := func(op Opcode, p string) []byte { return wireFrame(true, 0, op, true, []byte(p)) }
	cat := func(fs ...[]byte) []byte { return bytes.Join(fs, nil) }
	text := f(true, OpText, "hello")
	ping := f(true, OpPing, "")
	tests := []struct {
		name string
		data []byte
		want bool
	}{
		{"nothing", nil, false},
		{"a whole message", text, true},
		{"the first byte of a message", text[:1], true},
		{"half a message", text[:4], true},
		{"a ping alone", ping, false},
		{"a ping with a payload", f(true, OpPing, "abc"), false},
		{"a masked ping (a client's)", masked(OpPing, "abc"), false},
		{"pings and pongs", cat(ping, f(true, OpPong, "x"), ping), false},
		{"half a ping", f(true, OpPing, "abc")[:3], false},
		{"the first byte of a ping", ping[:1], false},
		{"a ping, then a message", cat(ping, text), true},
		{"a pong, then half a message", cat(f(true, OpPong, ""), text[:2]), true},
		{"a masked ping, then a masked message", cat(masked(OpPing, "p"), masked(OpBinary, "m")), true},
		{"a ping, then a fragment", cat(ping, f(false, OpText, "he")), true},
		{"a continuation after a ping", cat(ping, f(true, OpContinuation, "llo")), true},
		{"a close frame", f(true, OpClose, ""), false},
		{"a control frame claiming 126 bytes", []byte{0x89, 126, 0, 200}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := bufferedConn(t, tt.data).MessagePending(); got != tt.want {
				t.Errorf("MessagePending() = %v with % x buffered, want %v", got, tt.data, tt.want)
			}
		})
	}
}

// TestMessagePendingAllocs: the edge's reader asks after every request.
func TestMessagePendingAllocs(t *testing.T) {
	c := bufferedConn(t, bytes.Repeat(wireFrame(true, 0, OpPing, true, []byte("keepalive")), 20))
	if n := testing.AllocsPerRun(100, func() { c.MessagePending() }); n != 0 {
		t.Errorf("MessagePending allocates %v times", n)
	}
}

// FuzzMessagePending checks MessagePending against the tests' own frame
// parser on arbitrary buffered bytes: true exactly when, past whole
// control frames, a data frame (or part of one) is buffered.
func FuzzMessagePending(f *testing.F) {
	for _, s := range append(seeds(true), seeds(false)...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzInput {
			return
		}
		want := false
		for rest := data; len(rest) > 0; {
			if !Opcode(rest[0]&0x0F).control() || len(rest) >= 2 && rest[1]&0x7F > maxControlPayload {
				want = true
				break
			}
			r := bytes.NewReader(rest)
			if _, err := readRawFrame(r); err != nil {
				break // a control frame cut short
			}
			rest = rest[len(rest)-r.Len():]
		}
		if got := bufferedConn(t, data).MessagePending(); got != want {
			t.Fatalf("MessagePending() = %v with % x buffered, want %v", got, data, want)
		}
	})
}
