package edgecmd

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/pprof"
)

// readiness reports whether the edge accepts connections, and why not.
type readiness func() (ok bool, why string)

// healthz answers 200 while the process serves HTTP at all: a liveness
// probe.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte("ok\n"))
}

// readyzHandler answers 200 while the edge accepts connections and 503
// while it cannot (certificates not obtained yet) or will not (draining):
// what a load balancer checks before sending clients.
func readyzHandler(ready readiness) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		ok, why := ready()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(why + "\n"))
			return
		}
		w.Write([]byte("ready\n"))
	})
}

// addOps adds the operational endpoints to the main mux: health always,
// and the metrics unless the admin listener serves them.
func addOps(mux *http.ServeMux, ready readiness, metrics http.Handler) {
	mux.HandleFunc("/healthz", healthz)
	mux.Handle("/readyz", readyzHandler(ready))
	if metrics != nil {
		mux.Handle("/metrics", metrics)
	}
}

// adminHandler routes the admin listener's operational endpoints: health,
// metrics and Go's profiler (openAdmin adds the API and the admin page).
func adminHandler(ready readiness, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	addOps(mux, ready, metrics)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// serverErrors is the ErrorLog writer of the HTTP servers: TLS handshake
// failures (scanners, clients that do not trust the certificate) are
// debug noise on a public host; anything else is a warning.
type serverErrors struct{ log *slog.Logger }

func (s serverErrors) Write(p []byte) (int, error) {
	msg := string(bytes.TrimSpace(p))
	if bytes.Contains(p, []byte("TLS handshake error")) {
		s.log.Debug("http server", "err", msg)
	} else {
		s.log.Warn("http server", "err", msg)
	}
	return len(p), nil
}
