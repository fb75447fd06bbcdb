package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// PDU is an RTM PDU as a raw JSON client receives it, its numbers kept
// exact (json.Number).
type PDU struct {
	Action string         `json:"action"`
	ID     any            `json:"id"`
	Body   map[string]any `json:"body"`
}

// Recv reads the next message on ws and decodes it as a JSON PDU into a
// T (PDU, or a type of the test's; numbers kept exact, as json.Number),
// failing t if none comes within d or it does not decode: the raw RTM
// client's read, one for every test package.
func Recv[T any](t testing.TB, ws *websocket.Conn, d time.Duration) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, data, err := ws.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var p T
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	return p
}
