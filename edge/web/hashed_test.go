package web

import (
	"bytes"
	"net/http"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// sluiceJS stands for sluice.js: it names the files it loads as the real
// one does.
const sluiceJS = `const wasm = new URL("./dist/sluice.wasm", import.meta.url);
await import("./dist/wasm_exec.js");
` + "// padding to be compressed\n"

// hashedFS is testFS with that sluice.js.
func hashedFS() fstest.MapFS {
	fs := testFS()
	fs["sluice.js"] = &fstest.MapFile{Data: []byte(sluiceJS + strings.Repeat("//\n", 400))}
	return fs
}

var hashedName = regexp.MustCompile(`"\./((?:sluice|wasm_exec)\.[0-9a-f]{16}\.(?:wasm|js))"`)

// hashedPaths returns the hashed paths the served sluice.js loads.
func hashedPaths(t *testing.T, h *Handler) []string {
	t.Helper()
	resp := get(h, http.MethodGet, "/sluice.js", nil)
	js := string(decoded(t, resp))
	if strings.Contains(js, `"./dist/`) {
		t.Errorf("/sluice.js still loads a file by its plain name:\n%.300s", js)
	}
	var paths []string
	for _, m := range hashedName.FindAllStringSubmatch(js, -1) {
		paths = append(paths, "/"+m[1])
	}
	if len(paths) != 2 {
		t.Fatalf("/sluice.js names %q, want the hashed sluice.wasm and wasm_exec.js", paths)
	}
	return paths
}

// TestHashedNames checks that /sluice.js loads sluice.wasm and
// wasm_exec.js by content-hashed names, which serve the same bytes as the
// plain names and may be cached for a year; sluice.js has one too.
func TestHashedNames(t *testing.T) {
	t.Parallel()
	h := handler(t, hashedFS(), nil)
	plainJS := get(h, http.MethodGet, "/sluice.js", nil)
	if got := plainJS.Header.Get("Cache-Control"); got != "no-cache" {
		t.Errorf("/sluice.js Cache-Control %q, want no-cache", got)
	}
	paths := hashedPaths(t, h)
	var jsPath string
	for p, name := range h.hashed {
		if name == "sluice.js" {
			jsPath = p
		}
	}
	plain := map[string]string{paths[0]: "/sluice.wasm", paths[1]: "/wasm_exec.js", jsPath: "/sluice.js"}
	if strings.HasPrefix(paths[0], "/wasm_exec") {
		plain[paths[0]], plain[paths[1]] = "/wasm_exec.js", "/sluice.wasm"
	}
	for hashed, p := range plain {
		resp := get(h, http.MethodGet, hashed, map[string]string{"Accept-Encoding": "br"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", hashed, resp.StatusCode)
		}
		if got := resp.Header.Get("Cache-Control"); got != immutableCache {
			t.Errorf("%s: Cache-Control %q, want %q", hashed, got, immutableCache)
		}
		want := get(h, http.MethodGet, p, map[string]string{"Accept-Encoding": "br"})
		for _, k := range []string{"Content-Type", "Content-Encoding", "ETag", "Access-Control-Allow-Origin"} {
			if resp.Header.Get(k) != want.Header.Get(k) {
				t.Errorf("%s: %s %q, but %q for %s", hashed, k, resp.Header.Get(k), want.Header.Get(k), p)
			}
		}
		if !bytes.Equal(body(t, resp), body(t, want)) {
			t.Errorf("%s serves other bytes than %s", hashed, p)
		}
	}
	for _, bad := range []string{"/sluice.0123456789abcdef.wasm", "/sluice..wasm", "/dist" + paths[0]} {
		if resp := get(h, http.MethodGet, bad, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", bad, resp.StatusCode)
		}
	}
}

// TestHashedNamesFollowContent checks that a file's hashed name changes
// with its bytes, and the name of sluice.js with the names it loads.
func TestHashedNamesFollowContent(t *testing.T) {
	t.Parallel()
	fs := hashedFS()
	before := hashedPaths(t, handler(t, fs, nil))
	fs["dist/sluice.wasm.br"] = &fstest.MapFile{Data: brotlied(append(wasmBytes, "v2"...))}
	h := handler(t, fs, nil)
	after := hashedPaths(t, h)
	changed := 0
	for i := range before {
		if before[i] != after[i] {
			changed++
			if !strings.HasPrefix(after[i], "/sluice.") {
				t.Errorf("%s changed name with sluice.wasm", after[i])
			}
		}
	}
	if changed != 1 {
		t.Errorf("names before %q, after %q: want sluice.wasm's alone changed", before, after)
	}
	if resp := get(h, http.MethodGet, before[0], nil); before[0] != after[0] && resp.StatusCode != http.StatusNotFound {
		t.Errorf("the old name %s: status %d, want 404", before[0], resp.StatusCode)
	}
}

// TestHashedEmbedded checks the files of this build: the served
// sluice.js loads the hashed sluice.wasm and wasm_exec.js, which are
// there. It fails when sluice.js no longer names them by the literals
// hashedFiles rewrites.
func TestHashedEmbedded(t *testing.T) {
	t.Parallel()
	h, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range hashedPaths(t, h) {
		resp := get(h, http.MethodGet, p, nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != immutableCache {
			t.Errorf("%s: status %d, Cache-Control %q", p, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
	}
	checkImports(t, h)
}

// relativeLiteral is a string literal of a module that names a file
// beside or above it: what import and new URL take.
var relativeLiteral = regexp.MustCompile(`"(\.\.?/[^"\s]+\.(?:js|wasm))"`)

// checkImports follows the relative names in the served modules from
// /sluice.js: each is served, under a hashed name (cached a year) but for
// the one name a module may keep plain, the worker's "../sluice.js".
func checkImports(t *testing.T, h *Handler) {
	t.Helper()
	seen := map[string]bool{}
	queue := []string{"/sluice.js"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		resp := get(h, http.MethodGet, p, nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", p, resp.StatusCode)
			continue
		}
		if !strings.HasSuffix(p, ".js") {
			continue
		}
		for _, m := range relativeLiteral.FindAllStringSubmatch(string(decoded(t, resp)), -1) {
			next := path.Join(path.Dir(p), m[1])
			if _, hashed := h.hashed[next]; !hashed && next != "/sluice.js" {
				t.Errorf("%s names %s, which is not a hashed name", p, m[1])
			}
			queue = append(queue, next)
		}
	}
	if len(seen) < 5 {
		t.Errorf("from /sluice.js: %d files, want sluice.wasm, wasm_exec.js and the modules under lib/", len(seen))
	}
}

// TestRelative checks the relative names addHashed looks for and writes.
func TestRelative(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ from, to, want string }{
		{".", "dist/sluice.wasm", "./dist/sluice.wasm"},
		{"/", "/sluice.0123.wasm", "./sluice.0123.wasm"},
		{"lib", "lib/base.js", "./base.js"},
		{"/lib", "/lib/base.0123.js", "./base.0123.js"},
		{"lib", "sluice.js", "../sluice.js"},
		{"lib", "dist/sluice.wasm", "../dist/sluice.wasm"},
		{"a/b", "a/c.js", "../c.js"},
	} {
		if got := relative(tt.from, tt.to); got != tt.want {
			t.Errorf("relative(%q, %q) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
}

// TestPreloadETag checks what sluice.js relies on to take over a
// sluice.wasm that the page preloads by its plain name: in every
// encoding, its ETag, which a page of another origin may read, carries
// the hash of the hashed name /sluice.js loads.
func TestPreloadETag(t *testing.T) {
	t.Parallel()
	h := handler(t, hashedFS(), nil)
	var hash string
	for _, p := range hashedPaths(t, h) {
		if m := regexp.MustCompile(`^/sluice\.([0-9a-f]{16})\.wasm$`).FindStringSubmatch(p); m != nil {
			hash = m[1]
		}
	}
	etag := regexp.MustCompile(`^"` + hash + `(-[a-z]+)?"$`)
	for _, accept := range []string{"", "gzip", "br"} {
		resp := get(h, http.MethodGet, "/sluice.wasm", map[string]string{"Accept-Encoding": accept})
		if got := resp.Header.Get("ETag"); hash == "" || !etag.MatchString(got) {
			t.Errorf("/sluice.wasm with Accept-Encoding %q: ETag %q, want the hash %q of the name /sluice.js loads", accept, got, hash)
		}
		if got := resp.Header.Get("Access-Control-Expose-Headers"); got != "ETag" {
			t.Errorf("/sluice.wasm: Access-Control-Expose-Headers %q, want ETag", got)
		}
	}
}
