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

// testFS is a client-js tree with a built dist/.
func testFS() fstest.MapFS {
	fs := fstest.MapFS{
		"dist/sluice.wasm":     {Data: wasmBytes},
		"dist/sluice.wasm.gz":  {Data: gzipped(wasmBytes)},
		"dist/sluice.wasm.br":  {Data: []byte("brotli of sluice.wasm")},
		"dist/wasm_exec.js":    {Data: []byte("globalThis.Go = class {};")},
		"sluice.js":            {Data: []byte(strings.Repeat("export const x = 1;\n", 200))},
		"sluice.d.ts":          {Data: []byte("export type Position = string;")},
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

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
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
	h := newHandler(testFS())
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
	h := newHandler(testFS())
	tests := []struct {
		name, accept, encoding string
		want                   []byte
	}{
		{name: "brotli preferred", accept: "gzip, deflate, br", encoding: "br", want: []byte("brotli of sluice.wasm")},
		{name: "gzip", accept: "gzip", encoding: "gzip", want: gzipped(wasmBytes)},
		{name: "brotli refused by q=0", accept: "br;q=0, gzip;q=0.5", encoding: "gzip", want: gzipped(wasmBytes)},
		{name: "star", accept: "*", encoding: "br", want: []byte("brotli of sluice.wasm")},
		{name: "identity", accept: "", encoding: "", want: wasmBytes},
		{name: "nothing acceptable but identity", accept: "deflate, gzip;q=0", encoding: "", want: wasmBytes},
	}
	etags := map[string]string{}
	for _, tt := range tests {
		resp := get(h, http.MethodGet, "/sluice.wasm", map[string]string{"Accept-Encoding": tt.accept})
		if got := resp.Header.Get("Content-Encoding"); got != tt.encoding {
			t.Errorf("%s: Content-Encoding %q, want %q", tt.name, got, tt.encoding)
		}
		if !bytes.Equal(body(t, resp), tt.want) {
			t.Errorf("%s: wrong body", tt.name)
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
	h := newHandler(testFS())
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
	h := newHandler(testFS())
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
	h := newHandler(fs)
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
	h := newHandler(testFS())
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

// TestEmbedded checks the files of this build: every routed file that is
// not generated is there (the generated ones only after make wasm).
func TestEmbedded(t *testing.T) {
	t.Parallel()
	h := New()
	for path, name := range routes {
		if strings.HasPrefix(name, "dist/") {
			continue
		}
		if resp := get(h, http.MethodGet, path, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s (%s): status %d", path, name, resp.StatusCode)
		}
	}
}
