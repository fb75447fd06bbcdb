package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wasmBytes stands for sluice.wasm: large and compressible.
var wasmBytes = append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("sluice wasm "), 4000)...)

// wasmBrotli is wasmBytes compressed, as dist/ holds sluice.wasm.
var wasmBrotli = brotlied(wasmBytes)

// testFS is a client-js tree as committed: dist/ holds sluice.wasm only
// brotli-compressed.
func testFS() fstest.MapFS {
	fs := fstest.MapFS{
		"dist/sluice.wasm.br":  {Data: wasmBrotli},
		"dist/wasm_exec.js":    {Data: []byte("globalThis.Go = class {};")},
		"sluice.js":            {Data: []byte(strings.Repeat("export const x = 1;\n", 200))},
		"stream.js":            {Data: []byte("export const y = 2;")},
		"sluice.d.ts":          {Data: []byte("export type Position = string;")},
		"lib/base.js":          {Data: []byte("export class SluiceError extends Error {}")},
		"lib/resume.js":        {Data: []byte(`import { SluiceError } from "./base.js";`)},
		"lib/subscription.js":  {Data: []byte(`import { SluiceError } from "./base.js";`)},
		"lib/shared.js":        {Data: []byte(`new SharedWorker(new URL("./worker.js", import.meta.url));`)},
		"lib/worker.js":        {Data: []byte(`import { Sluice } from "../sluice.js";`)},
		"demo/index.html":      {Data: []byte("<!doctype html><title>Sluice</title>")},
		"demo/chat.html":       {Data: []byte("<!doctype html><title>chat</title>")},
		"demo/dashboard.html":  {Data: []byte("<!doctype html><title>dashboard</title>")},
		"demo/demo.css":        {Data: []byte("body{}")},
		"demo/demo.js":         {Data: []byte("export {};")},
		"demo/chart.js":        {Data: []byte("export {};")},
		"demo/favicon.svg":     {Data: []byte("<svg/>")},
		"demo/not-routed.html": {Data: []byte("secret")},
	}
	return fs
}

func brotlied(b []byte) []byte {
	var buf bytes.Buffer
	bw := brotli.NewWriter(&buf)
	bw.Write(b)
	bw.Close()
	return buf.Bytes()
}

// decoded is a response body with its Content-Encoding undone.
func decoded(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b := body(t, resp)
	var r io.Reader
	switch enc := resp.Header.Get("Content-Encoding"); enc {
	case "":
		return b
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("gzip body: %v", err)
		}
		r = zr
	default:
		t.Fatalf("Content-Encoding %q", enc)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s body: %v", resp.Header.Get("Content-Encoding"), err)
	}
	return plain
}

// handler is newHandler of fsys, which must succeed.
func handler(t *testing.T, fsys fstest.MapFS, opts *Options) *Handler {
	t.Helper()
	h, err := newHandler(fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get serves one request.
func get(h http.Handler, method, path string, header map[string]string) *http.Response {
	r := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestContentTypes(t *testing.T) {
	t.Parallel()
	h := handler(t, testFS(), nil)
	tests := []struct {
		name, path, ctype string
		cors              bool
	}{
		{name: "wasm", path: "/sluice.wasm", ctype: "application/wasm", cors: true},
		{name: "wasm where sluice.js looks", path: "/dist/sluice.wasm", ctype: "application/wasm", cors: true},
		{name: "wasm_exec", path: "/wasm_exec.js", ctype: "text/javascript; charset=utf-8", cors: true},
		{name: "module", path: "/sluice.js", ctype: "text/javascript; charset=utf-8", cors: true},
		{name: "types", path: "/sluice.d.ts", ctype: "application/typescript; charset=utf-8", cors: true},
		{name: "landing", path: "/", ctype: "text/html; charset=utf-8"},
		{name: "chat", path: "/chat.html", ctype: "text/html; charset=utf-8"},
		{name: "dashboard", path: "/dashboard.html", ctype: "text/html; charset=utf-8"},
		{name: "style", path: "/demo.css", ctype: "text/css; charset=utf-8"},
		{name: "icon", path: "/favicon.svg", ctype: "image/svg+xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := get(h, http.MethodGet, tt.path, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type %q, want %q", got, tt.ctype)
			}
			if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control %q", got)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin") == "*"; got != tt.cors {
				t.Errorf("CORS header present = %v, want %v", got, tt.cors)
			}
			if resp.Header.Get("ETag") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("headers %v", resp.Header)
			}
		})
	}
}

func TestEncodings(t *testing.T) {
	t.Parallel()
	h := handler(t, testFS(), nil)
	tests := []struct {
		name, accept, encoding string
	}{
		{name: "brotli preferred", accept: "gzip, deflate, br", encoding: "br"},
		{name: "gzip", accept: "gzip", encoding: "gzip"},
		{name: "brotli refused by q=0", accept: "br;q=0, gzip;q=0.5", encoding: "gzip"},
		{name: "star", accept: "*", encoding: "br"},
		{name: "identity", accept: "", encoding: ""},
		{name: "nothing acceptable but identity", accept: "deflate, gzip;q=0", encoding: ""},
	}
	etags := map[string]string{}
	for _, tt := range tests {
		resp := get(h, http.MethodGet, "/sluice.wasm", map[string]string{"Accept-Encoding": tt.accept})
		if got := resp.Header.Get("Content-Encoding"); got != tt.encoding {
			t.Errorf("%s: Content-Encoding %q, want %q", tt.name, got, tt.encoding)
		}
		if tt.encoding == "br" {
			if !bytes.Equal(body(t, resp), wasmBrotli) {
				t.Errorf("%s: not the embedded brotli stream", tt.name)
			}
		} else if !bytes.Equal(decoded(t, resp), wasmBytes) {
			t.Errorf("%s: body does not decode to sluice.wasm", tt.name)
		}
		if resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: Vary %q", tt.name, resp.Header.Get("Vary"))
		}
		etags[tt.encoding] = resp.Header.Get("ETag")
	}
	// Strong ETags differ per representation.
	if len(etags) != 3 || etags["br"] == etags["gzip"] || etags[""] == etags["gzip"] {
		t.Errorf("ETags %v: want one per encoding", etags)
	}
}

// TestLazyCompression checks the text files compressed on first request.
func TestLazyCompression(t *testing.T) {
	t.Parallel()
	h := handler(t, testFS(), nil)
	js := testFS()["sluice.js"].Data
	resp := get(h, http.MethodGet, "/sluice.js", map[string]string{"Accept-Encoding": "br"})
	if resp.Header.Get("Content-Encoding") != "br" {
		t.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	plain, err := io.ReadAll(brotli.NewReader(bytes.NewReader(body(t, resp))))
	if err != nil || !bytes.Equal(plain, js) {
		t.Fatalf("brotli body does not decode to sluice.js: %v", err)
	}
	resp = get(h, http.MethodGet, "/sluice.js", map[string]string{"Accept-Encoding": "gzip"})
	zr, err := gzip.NewReader(bytes.NewReader(body(t, resp)))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, js) {
		t.Fatalf("gzip body does not decode to sluice.js: %v", err)
	}
	// Tiny files go as they are.
	resp = get(h, http.MethodGet, "/favicon.svg", map[string]string{"Accept-Encoding": "br, gzip"})
	if resp.Header.Get("Content-Encoding") != "" || string(body(t, resp)) != "<svg/>" {
		t.Fatal("a tiny file was compressed")
	}
}

func TestNotModified(t *testing.T) {
	t.Parallel()
	h := handler(t, testFS(), nil)
	first := get(h, http.MethodGet, "/sluice.wasm", map[string]string{"Accept-Encoding": "gzip"})
	tag := first.Header.Get("ETag")
	tests := []struct {
		name, inm, accept string
		status            int
	}{
		{name: "same representation", inm: tag, accept: "gzip", status: http.StatusNotModified},
		{name: "in a list", inm: `"other", ` + tag, accept: "gzip", status: http.StatusNotModified},
		{name: "star", inm: "*", accept: "gzip", status: http.StatusNotModified},
		{name: "other encoding", inm: tag, accept: "br", status: http.StatusOK},
		{name: "stale", inm: `"0000"`, accept: "gzip", status: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := get(h, http.MethodGet, "/sluice.wasm", map[string]string{"If-None-Match": tt.inm, "Accept-Encoding": tt.accept})
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status == http.StatusNotModified && len(body(t, resp)) != 0 {
				t.Fatal("a 304 with a body")
			}
		})
	}
}

func TestMissingWasm(t *testing.T) {
	t.Parallel()
	fs := testFS()
	for name := range fs {
		if strings.HasPrefix(name, "dist/") {
			delete(fs, name)
		}
	}
	h := handler(t, fs, nil)
	for _, path := range []string{"/sluice.wasm", "/dist/sluice.wasm", "/wasm_exec.js"} {
		resp := get(h, http.MethodGet, path, nil)
		if b := string(body(t, resp)); resp.StatusCode != http.StatusNotFound || !strings.Contains(b, "make wasm") {
			t.Errorf("%s: %d %q, want 404 saying to run make wasm", path, resp.StatusCode, b)
		}
	}
	if resp := get(h, http.MethodGet, "/sluice.js", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("sluice.js: %d", resp.StatusCode)
	}
}

func TestMethodsAndPaths(t *testing.T) {
	t.Parallel()
	h := handler(t, testFS(), nil)
	tests := []struct {
		name, method, path string
		status             int
	}{
		{name: "head", method: http.MethodHead, path: "/sluice.js", status: http.StatusOK},
		{name: "post", method: http.MethodPost, path: "/sluice.js", status: http.StatusMethodNotAllowed},
		{name: "unknown path", method: http.MethodGet, path: "/nope.js", status: http.StatusNotFound},
		{name: "embedded but not routed", method: http.MethodGet, path: "/demo/not-routed.html", status: http.StatusNotFound},
		{name: "dist readme", method: http.MethodGet, path: "/dist/README.md", status: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if resp := get(h, tt.method, tt.path, nil); resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
}

// TestCorruptBrotli checks that a file embedded only brotli-compressed
// is checked when the handler is made, not on the first request that
// needs it decoded.
func TestCorruptBrotli(t *testing.T) {
	t.Parallel()
	fs := testFS()
	fs["dist/sluice.wasm.br"] = &fstest.MapFile{Data: wasmBrotli[:len(wasmBrotli)/2]}
	if _, err := newHandler(fs, nil); err == nil || !strings.Contains(err.Error(), "sluice.wasm.br") {
		t.Fatalf("newHandler of a truncated sluice.wasm.br: err %v, want one naming the file", err)
	}
}

// TestNoDemo checks an edge with the demo pages off: they are 404, the
// client files are served as before.
func TestNoDemo(t *testing.T) {
	t.Parallel()
	h := handler(t, testFS(), &Options{NoDemo: true})
	for path, name := range routes {
		want := http.StatusOK
		if strings.HasPrefix(name, "demo/") {
			want = http.StatusNotFound
		}
		if resp := get(h, http.MethodGet, path, nil); resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// TestEmbedded checks the files of this build, as every build of the
// binary serves them (`go build`, `go install`, `make build`): every
// routed file is there, and sluice.wasm is WebAssembly in every
// encoding. That they are what `make wasm` builds from this tree is
// checked by `make wasm-check`.
func TestEmbedded(t *testing.T) {
	t.Parallel()
	h, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for path, name := range routes {
		if resp := get(h, http.MethodGet, path, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s (%s): status %d: %s", path, name, resp.StatusCode, body(t, resp))
		}
	}
	var identity []byte
	for _, accept := range []string{"", "gzip", "br"} {
		resp := get(h, http.MethodGet, "/sluice.wasm", map[string]string{"Accept-Encoding": accept})
		wasm := decoded(t, resp)
		if !bytes.HasPrefix(wasm, []byte("\x00asm")) || len(wasm) < 1<<20 {
			t.Fatalf("sluice.wasm with Accept-Encoding %q: %d bytes starting %q, want a WebAssembly module", accept, len(wasm), wasm[:min(8, len(wasm))])
		}
		if identity == nil {
			identity = wasm
		} else if !bytes.Equal(wasm, identity) {
			t.Errorf("sluice.wasm with Accept-Encoding %q differs from the identity encoding", accept)
		}
	}
	resp := get(h, http.MethodGet, "/wasm_exec.js", nil)
	if b := body(t, resp); !bytes.Contains(b, []byte("globalThis.Go")) {
		t.Errorf("wasm_exec.js does not define globalThis.Go:\n%.200s", b)
	}
}
