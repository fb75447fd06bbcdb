package edgecmd

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
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
// dashboard draws) until ctx ends or the returned publisher is stopped,
// named by edgeName.
func startStats(ctx context.Context, srv *server.Server, edge string, log *slog.Logger) *sysstats.Publisher {
	return sysstats.Start(ctx, srv, &sysstats.Options{Edge: edge, Logger: log})
}

// edgeName is how the edge names itself in $sys.stats, where the edges
// of a cluster publish together: its NATS node's name in an embedded
// cluster (cluster.node_name, unique per node), else the host's name and
// the port the edge listens on.
func edgeName(cfg *Config, dur *durability, l *listeners) string {
	if dur != nil && dur.node != nil && cfg.Cluster.clustered() {
		return dur.node.Server().Name()
	}
	host, _ := os.Hostname()
	if _, port, err := net.SplitHostPort(l.addr); err == nil {
		return host + ":" + port
	}
	return host
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
