package edgecmd

import (
	"fmt"
	"net"
	"slices"
)

// DemoAPIKey is the demo app's server API key in the default
// configuration, a development key: the banner prints it and
// docs/server-api.md's examples use it, so that they work against `make
// run`. It is public, so Warnings names it on an edge that serves beyond
// loopback (demoKeyWarnings).
const DemoAPIKey = "sluice-demo-development-api-key"

// demoKeyWarnings warns of an app holding DemoAPIKey while the server API
// is served beyond loopback (the main listener, or the admin one): anyone
// who read the docs can publish to, read and disconnect its users.
func (c *Config) demoKeyWarnings() []string {
	var exposed []string
	for _, addr := range []string{c.ListenAddr(), c.Admin.Listen} {
		if addr != "" && !onLoopback(addr) {
			exposed = append(exposed, addr)
		}
	}
	if len(exposed) == 0 {
		return nil
	}
	var ws []string
	for i, a := range c.Apps {
		if slices.Contains(a.APIKeys, DemoAPIKey) {
			ws = append(ws, fmt.Sprintf("apps[%d] (%q) has the development API key %q, which the docs publish, on %v: "+
				"anyone who reaches it can use the server API as the app's backend (publish, read, disconnect its users); "+
				"configure the app with api_keys of its own (--config)", i, a.Appkey, DemoAPIKey, exposed))
		}
	}
	return ws
}

// An edge serving TLS on a public address is a production edge, and two
// defaults that suit a laptop expose it there: allowed_origins ["*"]
// beside a connect hook, and /metrics on the public listener. Warnings
// names both at start (and --check-config), with what to set.

// publicTLS reports whether the edge serves TLS where the internet may
// reach it: for ACME domains (which resolve to it), or on a listen
// address that is not loopback (":443", "0.0.0.0:443", a public IP or
// name). An edge that serves TLS on loopback alone sits behind something
// else that decides its exposure.
func (c *Config) publicTLS() bool {
	if !c.TLS.enabled() {
		return false
	}
	if len(c.TLS.Domains) > 0 {
		return true
	}
	host, _, err := net.SplitHostPort(c.ListenAddr())
	if err != nil || host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// exposureWarnings are the warnings of a public TLS edge: any origin
// beside a connect hook, and /metrics on the public listener.
func (c *Config) exposureWarnings() []string {
	if !c.publicTLS() {
		return nil
	}
	var ws []string
	if w := c.originWarning(); w != "" {
		ws = append(ws, w)
	}
	if c.Admin.Listen == "" {
		ws = append(ws, fmt.Sprintf("/metrics is served on the public listener (listen %s) because admin.listen is not set: "+
			"anyone can read the edge's metrics (its apps, connections and traffic); set admin.listen to a private address, "+
			"such as 127.0.0.1:9090, which moves /metrics there", c.ListenAddr()))
	}
	return ws
}

// originWarning warns of cross-site WebSocket hijacking: a connect hook
// authenticates an upgrade by the browser's cookies, which a browser
// sends from a page of any site, so any origin lets every site's pages
// connect as their visitors. "" when no app has a connect hook or the
// origins are restricted.
func (c *Config) originWarning() string {
	origins := c.AllowedOrigins
	if len(origins) > 0 && !slices.Contains(origins, "*") {
		return ""
	}
	for i, a := range c.Apps {
		if a.Hooks.Connect == "" {
			continue
		}
		what := `allowed_origins is ["*"] (the default)`
		if len(origins) > 0 {
			what = `allowed_origins has "*"`
		}
		return fmt.Sprintf("%s on an edge serving TLS on a public address, and apps[%d] (%q) has a connect hook, "+
			"which sees the browser's cookies: a page of any site can open a WebSocket here as its visitor "+
			"(cross-site WebSocket hijacking); set allowed_origins to the hosts of your app's pages, "+
			`such as ["app.example.com"] (the edge's own pages and clients outside browsers are always allowed)`, what, i, a.Appkey)
	}
	return ""
}
