// Package web serves the browser side of Sluice from the edge's own
// binary: the JavaScript client (/sluice.js, the modules it imports under
// /lib/, /sluice.d.ts), the WebAssembly client it loads (/sluice.wasm,
// /wasm_exec.js, also under /dist/ where sluice.js looks for them), all
// of it as an npm package
// (/sluice.tgz) and the demo pages at / (a chat room and a live dashboard
// of the edge), which Options.NoDemo turns off.
//
// Every file is embedded (package client-js). Responses carry a strong
// ETag and "Cache-Control: no-cache", so browsers revalidate and get 304
// Not Modified until the binary changes; the client files are also
// served under content-hashed names, cached for a year (hashed.go).
// Files are sent gzip- or brotli-compressed when the browser accepts it
// (brotli first), from variants compressed once: sluice.wasm is embedded
// brotli-compressed only (as `make wasm` writes and the repository holds
// it) and decoded on the first request that cannot take brotli; the text
// files are compressed on first request. The client files are served with
// "Access-Control-Allow-Origin: *", so any page may load them from an
// edge: the edge authenticates by appkey and role, not by cookie.
package web

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"

	clientjs "github.com/sluicehq/sluice/client-js"
)

// routes maps URL paths to embedded files. The client files are at the
// root, where a page expects them (<script type=module src=/sluice.js>),
// and under /dist/ too, where sluice.js looks for its WebAssembly files
// by default.
var routes = map[string]string{
	"/":               "demo/index.html",
	"/index.html":     "demo/index.html",
	"/chat.html":      "demo/chat.html",
	"/dashboard.html": "demo/dashboard.html",
	"/demo.css":       "demo/demo.css",
	"/demo.js":        "demo/demo.js",
	"/chart.js":       "demo/chart.js",
	"/favicon.svg":    "demo/favicon.svg",

	"/sluice.js":         "sluice.js",
	"/stream.js":         "stream.js",
	"/sluice.d.ts":       "sluice.d.ts",
	"/sluice.wasm":       "dist/sluice.wasm",
	"/wasm_exec.js":      "dist/wasm_exec.js",
	"/dist/sluice.wasm":  "dist/sluice.wasm",
	"/dist/wasm_exec.js": "dist/wasm_exec.js",

	// The modules sluice.js imports, where it imports them from.
	"/lib/base.js":         "lib/base.js",
	"/lib/resume.js":       "lib/resume.js",
	"/lib/shared.js":       "lib/shared.js",
	"/lib/worker.js":       "lib/worker.js",
	"/lib/subscription.js": "lib/subscription.js",
}

// Handler serves the embedded files. It is safe for concurrent use.
type Handler struct {
	assets  map[string]*asset // by embedded name; a missing file is absent
	hashed  map[string]string // content-hashed URL path: embedded name (hashed.go)
	noDemo  bool
	fsys    fs.FS
	version string

	tgzOnce sync.Once
	tgz     *asset // nil when it could not be built (a file missing)
}

// Options configure a Handler; nil means the defaults.
type Options struct {
	// NoDemo leaves the demo pages out (404): an edge in production
	// serves the client files only.
	NoDemo bool
	// Version is the edge's, which the npm package at /sluice.tgz takes
	// (made valid for npm: v1.2.3 is 1.2.3, "dev" 0.0.0-dev). Default
	// "dev".
	Version string
}

// New returns a Handler for the files embedded in the binary. It fails
// only for a binary whose embedded files are corrupt, which TestEmbedded
// keeps from being built.
func New(opts *Options) (*Handler, error) {
	h, err := newHandler(clientjs.Files, opts)
	if err != nil {
		return nil, fmt.Errorf("web: the embedded browser client: %w", err)
	}
	return h, nil
}

// newHandler indexes the routed files of fsys. A routed file that is
// missing is answered with a 404 that says how to build it; one that is
// there but cannot be decoded is an error.
func newHandler(fsys fs.FS, opts *Options) (*Handler, error) {
	if opts == nil {
		opts = &Options{}
	}
	h := &Handler{assets: make(map[string]*asset), noDemo: opts.NoDemo, fsys: fsys, version: cmp.Or(opts.Version, "dev")}
	for _, name := range routes {
		if h.assets[name] != nil {
			continue // routed twice (/sluice.wasm and /dist/sluice.wasm)
		}
		a, err := load(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		h.assets[name] = a
	}
	h.addHashed()
	return h, nil
}

// load reads a file and the variants compressed beside it, if any; a
// file embedded only as FILE.br is checked to decode (sluice.wasm, which
// is committed that way) and tagged by its compressed bytes.
func load(fsys fs.FS, name string) (*asset, error) {
	a := &asset{name: name, ctype: contentType(name)}
	if b, err := fs.ReadFile(fsys, name+".br"); err == nil {
		a.br = variant{data: b, ready: true}
	}
	if b, err := fs.ReadFile(fsys, name+".gz"); err == nil {
		a.gz = variant{data: b, ready: true}
	}
	data, err := fs.ReadFile(fsys, name)
	switch {
	case err == nil:
		a.data = data
	case errors.Is(err, fs.ErrNotExist) && a.br.ready:
		// Decoded through once (some 40 ms of CPU for sluice.wasm) so that
		// a corrupt file fails here, not on a request; the 3.6 MB it
		// decodes to are kept only once a request needs them.
		if _, err := io.Copy(io.Discard, brotli.NewReader(bytes.NewReader(a.br.data))); err != nil {
			return nil, fmt.Errorf("%s.br: %w", name, err)
		}
		a.brOnly = true
		data = a.br.data
	default:
		return nil, err
	}
	sum := sha256.Sum256(data)
	a.etag = hex.EncodeToString(sum[:8])
	return a, nil
}

// tarball returns the npm package, built on first request (some 300 ms:
// sluice.wasm is decoded and compressed again), or nil when a file of it
// is missing. Its sluice.wasm.gz is the one the edge serves.
func (h *Handler) tarball() *asset {
	h.tgzOnce.Do(func() {
		wasm := h.assets["dist/sluice.wasm"]
		if wasm == nil {
			return
		}
		data, err := wasm.identity()
		if err != nil {
			return
		}
		gz, encoding, _ := wasm.pick("gzip")
		if encoding != "gzip" {
			return // not reached: 3.6 MB of WebAssembly compress
		}
		h.tgz, _ = tarballAsset(h.fsys, h.version, map[string][]byte{"dist/sluice.wasm": data, "dist/sluice.wasm.gz": gz})
	})
	return h.tgz
}

// contentType is the media type of a file, by extension.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".wasm":
		return "application/wasm"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".ts":
		return "application/typescript; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}

// ServeHTTP serves the routed files and the npm package; other paths are
// 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := routes[r.URL.Path]
	if r.URL.Path == tarballPath {
		name, ok = "sluice.tgz", true
	}
	cache := "no-cache"
	if !ok {
		if name, ok = h.hashed[r.URL.Path]; ok {
			cache = immutableCache
		}
	}
	if !ok || h.noDemo && strings.HasPrefix(name, "demo/") {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	a := h.assets[name]
	if name == "sluice.tgz" {
		a = h.tarball()
	}
	if a == nil {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, fmt.Sprintf("%s is not in this binary: it was built from an incomplete tree (run `make wasm`, then build sluice again)", path.Base(name)), http.StatusNotFound)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", a.ctype)
	hdr.Set("Cache-Control", cache)
	hdr.Set("X-Content-Type-Options", "nosniff")
	if !strings.HasPrefix(name, "demo/") {
		hdr.Set("Access-Control-Allow-Origin", "*")
		// sluice.js compares a preloaded sluice.wasm's with the hash
		// of the one it loads (docs/browser.md, "Loading early").
		hdr.Set("Access-Control-Expose-Headers", "ETag")
	}
	body, encoding, tag := a.pick(r.Header.Get("Accept-Encoding"))
	if a.compressible() {
		hdr.Add("Vary", "Accept-Encoding")
	}
	if encoding != "" {
		hdr.Set("Content-Encoding", encoding)
	}
	hdr.Set("ETag", `"`+tag+`"`)
	// ServeContent answers If-None-Match with 304 (against the ETag set
	// above), HEAD and ranges.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}
