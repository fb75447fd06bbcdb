package edgecmd

import (
	"net/http"

	"github.com/sluicehq/sluice/edge/server"
)

// newHandler routes the edge's HTTP endpoints: the RTM WebSocket endpoint
// at /v2, and the operational and browser endpoints beside it.
func newHandler(srv *server.Server, web WebConfig, version string) (*http.ServeMux, error) {
	wh, err := webHandler(web, version)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/v2", srv)
	mux.Handle("/v2/", srv)
	mux.Handle("/", wh)
	return mux, nil
}
