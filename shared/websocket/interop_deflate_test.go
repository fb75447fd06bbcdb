//go:build !js

package websocket

import (
	"testing"

	cws "github.com/coder/websocket"
)

// coderModes are coder/websocket's compression modes that negotiate
// permessage-deflate.
var coderModes = []struct {
	name string
	mode cws.CompressionMode
}{
	{"no context takeover", cws.CompressionNoContextTakeover},
	{"context takeover", cws.CompressionContextTakeover},
}

// deflateSizes are interopSizes with a smaller largest message: deflate
// under the race detector is slow.
var deflateSizes = []int{0, 1, 125, 126, 2 << 10, 65535, 65536, 65537, 256 << 10}

// TestInteropDeflate exchanges compressed messages of every size with
// coder/websocket, as server and as client, in both of its compression
// modes: each side inflates what the other deflated. Every message is
// compressed both ways (thresholds 0 and -1).
func TestInteropDeflate(t *testing.T) {
	t.Parallel()
	for _, m := range coderModes {
		t.Run("our server, coder client, "+m.name, func(t *testing.T) {
			t.Parallel()
			negotiated := make(chan bool, 1)
			url := ourServer(t, &AcceptOptions{Deflate: &DeflateOptions{Threshold: -1}}, func(c *Conn) {
				_, on := c.Deflate()
				negotiated <- on
				echo(c)
			})
			cc := coderDial(t, url, &cws.DialOptions{CompressionMode: m.mode, CompressionThreshold: 1})
			if !<-negotiated {
				t.Fatal("deflate not negotiated")
			}
			coderEchoes(t, cc, deflateSizes)
		})
		t.Run("coder server, our client, "+m.name, func(t *testing.T) {
			t.Parallel()
			url := coderServer(t, &cws.AcceptOptions{CompressionMode: m.mode, CompressionThreshold: 1}, coderEcho)
			c := ourDial(t, url, &DialOptions{Deflate: &DeflateOptions{Threshold: -1}})
			if _, on := c.Deflate(); !on {
				t.Fatal("deflate not negotiated")
			}
			ourEchoes(t, c, deflateSizes)
		})
	}
}
