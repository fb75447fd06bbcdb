package stream

import (
	"bytes"
	"strings"
	"testing"
)

// parseSSEData reads back the data of the one event in b, as EventSource
// does: data lines joined with "\n".
func parseSSEData(t testing.TB, b []byte) string {
	t.Helper()
	if !bytes.HasSuffix(b, []byte("\n\n")) {
		t.Fatalf("event %q does not end with a blank line", b)
	}
	var data []string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n") {
		v, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q of %q is not a data line", line, b)
		}
		data = append(data, v)
	}
	return strings.Join(data, "\n")
}

// FuzzAppendSSE checks that any data survives an event: what EventSource
// reads back is the data with its line breaks as "\n".
func FuzzAppendSSE(f *testing.F) {
	f.Add([]byte(`{"a":1}`))
	f.Add([]byte("{\r\n\"a\":\r1\n}"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := parseSSEData(t, appendSSE(nil, "", "", data))
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
		if got != want {
			t.Fatalf("read back %q, want %q", got, want)
		}
	})
}

// FuzzNextFrame checks that the parser of the session's frames never
// reads past its input, and finds the frames a server writes.
func FuzzNextFrame(f *testing.F) {
	f.Add([]byte{0x81, 2, 'h', 'i'})
	f.Add([]byte{0x82, 126, 0, 3, 1, 2, 3})
	f.Add([]byte{0x89, 127, 0xff, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := nextFrame(b)
		if err != nil || n == 0 {
			return
		}
		if n > len(b) || len(fr.payload) > n {
			t.Fatalf("frame of %d bytes (payload %d) from %d bytes", n, len(fr.payload), len(b))
		}
		again := unmaskHeader(appendClientFrame(nil, fr.op, fr.payload))
		fr2, n2, err := nextFrame(again)
		if err != nil || n2 != len(again) || fr2.op != fr.op || !bytes.Equal(fr2.payload, fr.payload) {
			t.Fatalf("a frame written back does not parse the same: %v", err)
		}
	})
}

func TestWireChunks(t *testing.T) {
	t.Parallel()
	var w Wire
	w.extra = "Access-Control-Allow-Origin: https://a.example\r\n"
	w.Head(ContentTypeSSE)
	*w.Body() = append(*w.Body(), "data: x\n\n"...)
	w.End()
	got := string(w.bytes(nil))
	for _, want := range []string{"HTTP/1.1 200 OK\r\n", "Access-Control-Allow-Origin: https://a.example\r\n",
		"Transfer-Encoding: chunked\r\n\r\n9\r\ndata: x\n\n\r\n0\r\n\r\n"} {
		if !strings.Contains(got, want) {
			t.Fatalf("response %q lacks %q", got, want)
		}
	}
	var r Wire
	r.Respond(403, "authorization_denied", "Unauthorized")
	if got := string(r.bytes(nil)); !strings.HasPrefix(got, "HTTP/1.1 403 Forbidden\r\n") ||
		!strings.HasSuffix(got, "\r\n\r\n{\"error\":\"authorization_denied\",\"reason\":\"Unauthorized\"}\n") {
		t.Fatalf("refusal %q", got)
	}
}

// TestWireHTTP10 checks the response to an HTTP/1.0 client (nginx's
// default to its upstreams): no chunks, the body as it is, ended by the
// close.
func TestWireHTTP10(t *testing.T) {
	t.Parallel()
	w := Wire{identity: true}
	w.Head(ContentTypeNDJSON)
	*w.Body() = append(*w.Body(), "{}\n"...)
	w.End()
	got := string(w.bytes(nil))
	if strings.Contains(got, "chunked") || !strings.Contains(got, "Connection: close\r\n\r\n{}\n") || !strings.HasSuffix(got, "\r\n\r\n{}\n") {
		t.Fatalf("response %q", got)
	}
}
