// Package readyfile is the file `sluice edge --ready-file PATH` writes
// once its listeners are open and its banner printed, just before it
// serves: where the edge serves and what it serves,
// as JSON, for scripts, supervisors and tests that start an edge on port
// 0 and must learn its address without reading the banner (which is for
// people, and may change).
//
//	{"url":"ws://127.0.0.1:40123","listen":"127.0.0.1:40123","appkeys":["demo"],"pid":4242}
//
// The file appears whole (it is written beside PATH and renamed onto it),
// is removed when the edge starts (a file left by a killed edge is not
// taken for this one's) and again when it exits. Listening is not taking
// traffic: /readyz says when the edge is ready (its journal serving, its
// TLS certificates obtained), and is not draining.
package readyfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Info is what the file holds.
type Info struct {
	// URL is the RTM endpoint clients dial (without /v2): ws://HOST:PORT,
	// or wss://DOMAIN[:PORT] with TLS.
	URL string `json:"url"`
	// Listen is the main listener's address, host:port: the URL's port
	// on the address the edge listens on (RTM, health, the server API).
	Listen string `json:"listen"`
	// Admin is the admin listener's address (metrics, pprof, the server
	// API), host:port; "" without one.
	Admin string `json:"admin,omitempty"`
	// HTTP is the plain HTTP listener's address beside HTTPS (ACME
	// http-01, redirects), host:port; "" without TLS or without one.
	HTTP string `json:"http,omitempty"`
	// AppKeys are the appkeys of the apps served, in configuration order.
	AppKeys []string `json:"appkeys"`
	// PID is the edge's process id.
	PID int `json:"pid"`
}

// Write writes info to path atomically: a reader sees no file or the
// whole of it.
func Write(path string, info Info) error {
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("readyfile: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("readyfile: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("readyfile: %w", err)
	}
	return nil
}

// Read reads the file at path. Before the edge has written it, the error
// wraps fs.ErrNotExist.
func Read(path string) (Info, error) {
	var info Info
	b, err := os.ReadFile(path)
	if err != nil {
		return info, fmt.Errorf("readyfile: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("readyfile: %s: %w", path, err)
	}
	return info, nil
}
