package edgecmd

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/sysstats"
	"github.com/sluicehq/sluice/edge/web"
)

// webHandler serves the browser client (sluice.js, sluice.wasm) and,
// unless web.demo is false, the demo pages, a chat room and a dashboard of
// the edge, at /; they show version.
func webHandler(cfg WebConfig, version string) (http.Handler, error) {
	return web.New(&web.Options{NoDemo: !cfg.demo(), Version: version})
}

// startStats publishes the edge's numbers on $sys.stats (which the
// dashboard draws) until ctx ends or the returned publisher is stopped.
func startStats(ctx context.Context, srv *server.Server, log *slog.Logger) *sysstats.Publisher {
	return sysstats.Start(ctx, srv, &sysstats.Options{Logger: log})
}

// demoURL is the address of the demo pages for an RTM endpoint URL and
// the appkey they should connect with: ws://host -> http://host/,
// wss://host -> https://host/, with ?appkey= unless it is the pages'
// default, "demo".
func demoURL(rtmURL, appkey string) string {
	u := "http" + strings.TrimPrefix(rtmURL, "ws") + "/"
	if appkey != app.Demo().Key {
		u += "?appkey=" + url.QueryEscape(appkey)
	}
	return u
}
