package tls

import (
	"net"
	"net/http"
	"strconv"
)

// RedirectHandler sends every request to the same host and path over
// HTTPS, on httpsPort (left out of the URL when it is 443). It is what the
// HTTP listener serves besides ACME challenges: a WebSocket client that
// dialed ws:// learns to use wss://, and a person typing the host name in
// a browser lands on the HTTPS site.
func RedirectHandler(httpsPort int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" {
			http.Error(w, "a Host header is required", http.StatusBadRequest)
			return
		}
		if httpsPort != 443 && httpsPort != 0 {
			host = net.JoinHostPort(host, strconv.Itoa(httpsPort))
		} else if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			host = "[" + host + "]"
		}
		// Close the plain-text connection: nothing more should use it.
		w.Header().Set("Connection", "close")
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}
