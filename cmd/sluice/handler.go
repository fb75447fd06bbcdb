package main

import (
	"net/http"

	"github.com/sluicehq/sluice/edge/server"
)

// newHandler routes the edge's HTTP endpoints: the RTM WebSocket endpoint
// at /v2, and the operational and browser endpoints beside it.
func newHandler(srv *server.Server) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/v2", srv)
	mux.Handle("/v2/", srv)
	mux.Handle("/", webHandler())
	return mux
}
