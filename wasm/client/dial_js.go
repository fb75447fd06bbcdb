//go:build js

package client

import (
	"context"

	"github.com/coder/websocket"
)

// dialWebSocket opens a browser WebSocket through coder/websocket's
// syscall/js implementation. Browsers hide the HTTP response of a refused
// upgrade, so an unknown appkey shows up as a generic dial error here, and
// custom headers cannot be sent (cfg.header is ignored).
func dialWebSocket(ctx context.Context, url string, cfg dialConfig) (transport, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		Subprotocols: cfg.subprotocols,
	})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(readLimit)
	return &wsTransport{ws: ws}, nil
}
