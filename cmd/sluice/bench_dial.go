package main

import (
	"net/http"

	"github.com/sluicehq/sluice/wasm/loadgen"
)

// spreadLoopbackDials makes this process's connections to a loopback
// edge leave from several loopback source addresses, so that ramping up
// past about 14,000 connections does not cost a millisecond of kernel CPU
// each (see loadgen.SpreadDialer), and returns what undoes it. The Go
// client dials its WebSockets through net/http's default transport, so
// that is where the dialer goes; call it before any connection is being
// dialed, and undo it once none is.
func spreadLoopbackDials() (restore func()) {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return func() {}
	}
	prev := t.DialContext
	t.DialContext = (&loadgen.SpreadDialer{}).DialContext
	return func() { t.DialContext = prev }
}
