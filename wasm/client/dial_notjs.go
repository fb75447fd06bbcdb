//go:build !js

package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/shared/rtm"
)

// dialWebSocket opens a WebSocket with coder/websocket. An HTTP refusal
// before the upgrade (the edge answers 401 {"error":"invalid_appkey",...})
// is returned as an *rtm.Error so callers can tell it from a network error.
func dialWebSocket(ctx context.Context, url string, cfg dialConfig) (transport, error) {
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		Subprotocols: cfg.subprotocols,
		HTTPHeader:   http.Header(cfg.header),
	})
	if err != nil {
		if refusal := httpRefusal(resp); refusal != nil {
			return nil, refusal
		}
		return nil, err
	}
	ws.SetReadLimit(readLimit)
	return &wsTransport{ws: ws}, nil
}

// httpRefusal turns a non-101 handshake response into an error that says
// what the edge said: an *rtm.Error when the body is the edge's
// {"error","reason"} JSON, else the HTTP status. It returns nil when there
// is no response (a network error).
func httpRefusal(resp *http.Response) error {
	if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		return nil
	}
	var body struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if resp.Body != nil {
		// coder/websocket keeps at most the first 1 KiB of the body.
		b, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(b, &body) == nil && body.Error != "" {
			return &rtm.Error{Code: rtm.Code(body.Error), Reason: body.Reason}
		}
	}
	return fmt.Errorf("%w: HTTP %s", ErrRefused, resp.Status)
}

// wsTransport adapts a coder/websocket connection.
type wsTransport struct {
	ws *websocket.Conn
}

func (t *wsTransport) Read(ctx context.Context) ([]byte, error) {
	_, p, err := t.ws.Read(ctx)
	return p, err
}

func (t *wsTransport) Write(ctx context.Context, binary bool, p []byte) error {
	typ := websocket.MessageText
	if binary {
		typ = websocket.MessageBinary
	}
	return t.ws.Write(ctx, typ, p)
}

func (t *wsTransport) Ping(ctx context.Context) error { return t.ws.Ping(ctx) }

func (t *wsTransport) Close(code int, reason string) error {
	return t.ws.Close(websocket.StatusCode(code), reason)
}

func (t *wsTransport) Subprotocol() string { return t.ws.Subprotocol() }
