// Package edgecmd is `sluice edge`, importable: the edge's typed
// configuration (Config, loaded from YAML by LoadConfig) and the wiring
// that turns one into a running edge (Edge): the logger and metrics, the
// durability on NATS JetStream (an embedded node or an external
// cluster), the RTM server, its listeners (TLS with ACME, the admin
// listener, per-address limits), the web pages, the server API, the
// $sys.stats publisher, the banner and ready file, and the drain on
// stop.
//
// Package main of cmd/sluice parses the command line over a Config and
// calls Run, which maps SIGTERM to Edge.Shutdown and SIGINT to
// Edge.Close. Tests start the same Edge in their process, on port 0, and
// stop it directly (see edgecmdtest):
//
//	cfg, err := edgecmd.LoadConfig("edge.yaml")
//	cfg.Listen = "127.0.0.1:0"
//	e, err := edgecmd.Start(ctx, cfg, &edgecmd.Options{Stderr: os.Stderr})
//	defer e.Close()
//	dial(e.URL() + "/v2?appkey=demo")
//
// The stop has two speeds, as the binary's signals have. Shutdown is for
// a load balancer in front: /readyz answers 503 for limits.drain_delay
// while the edge serves on, then the open connections are closed with
// 1001 going away, spread over limits.drain_spread. Close skips the
// delay and the spread. Either way the edge refuses new connections,
// waits up to limits.shutdown_timeout for the open ones to close, and
// then closes its journal, so that publishes in flight get their answer.
//
// Dependencies point one way: edgecmd imports edge/... and shared/...,
// which never import cmd/.
package edgecmd
