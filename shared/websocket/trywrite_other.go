//go:build !unix && !js

package websocket

// init leaves TryWrite off: without a non-blocking write(2) every
// write goes through Write.
func (t *tryWriter) init(*Conn) {}

func (t *tryWriter) write(uintptr) bool { return true }
