package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/sysstats"
	"github.com/sluicehq/sluice/edge/web"
)

// webHandler serves the browser client (sluice.js, sluice.wasm) and the
// demo pages, a chat room and a dashboard of the edge, at /.
func webHandler() http.Handler { return web.New() }

// startStats publishes the edge's numbers on $sys.stats (which the
// dashboard draws) until ctx ends or the returned publisher is stopped.
func startStats(ctx context.Context, srv *server.Server, log *slog.Logger) *sysstats.Publisher {
	return sysstats.Start(ctx, srv, &sysstats.Options{Logger: log})
}

// demoURL is the address of the demo pages for an RTM endpoint URL:
// ws://host -> http://host/, wss://host -> https://host/.
func demoURL(rtmURL string) string {
	return "http" + strings.TrimPrefix(rtmURL, "ws") + "/"
}
