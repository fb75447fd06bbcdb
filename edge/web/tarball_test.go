package web

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"path"
	"slices"
	"testing"
	"testing/fstest"
)

func TestNPMVersion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"v1.2.3":      "1.2.3",
		"1.2.3":       "1.2.3",
		"v1.2.3-rc.1": "1.2.3-rc.1",
		"v0.0.0-20261201113523-7c490e839c4e+dirty": "0.0.0-20261201113523-7c490e839c4e+dirty",
		"dev":                    "0.0.0-dev",
		"dev-7c490e839c4e+dirty": "0.0.0-dev-7c490e839c4e-dirty",
		"":                       "0.0.0-dev",
		"v1.2":                   "0.0.0-v1.2",
	} {
		if got := npmVersion(in); got != want {
			t.Errorf("npmVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// untar reads a gzipped tarball into name -> contents.
func untar(t *testing.T, tgz []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("tar: %v", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = b
	}
}

// packageFS is testFS with what the npm package adds.
func packageFS() fstest.MapFS {
	fs := testFS()
	fs["package.json"] = &fstest.MapFile{Data: []byte(`{"name": "@sluicehq/sluice", "version": "0.0.0-dev", "files": ["sluice.js"], "scripts": {"prepack": "make -C .. wasm"}}`)}
	fs["README.md"] = &fstest.MapFile{Data: []byte("# readme")}
	fs["LICENSE"] = &fstest.MapFile{Data: []byte("Apache License")}
	fs["install.mjs"] = &fstest.MapFile{Data: []byte("// decodes dist/sluice.wasm.br")}
	fs["dist/sluice.wasm.d.ts"] = &fstest.MapFile{Data: []byte("declare const wasmURL: string;")}
	return fs
}

// TestTarball checks /sluice.tgz: the package npm installs, versioned as
// the edge, with the files of the tree and sluice.wasm decoded, sent as
// it is (it is gzip), and the same bytes on every request.
func TestTarball(t *testing.T) {
	t.Parallel()
	fsys := packageFS()
	h := handler(t, fsys, &Options{Version: "v1.4.2", NoDemo: true})
	resp := get(h, http.MethodGet, "/sluice.tgz", map[string]string{"Accept-Encoding": "br, gzip"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/gzip" ||
		resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("GET /sluice.tgz: %d, headers %v", resp.StatusCode, resp.Header)
	}
	tgz := body(t, resp)
	files := untar(t, tgz)
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"package/LICENSE", "package/README.md", "package/dist/sluice.wasm", "package/dist/sluice.wasm.br",
		"package/dist/sluice.wasm.d.ts", "package/dist/sluice.wasm.gz", "package/dist/wasm_exec.js",
		"package/install.mjs", "package/lib/base.js", "package/lib/resume.js", "package/lib/shared.js", "package/lib/subscription.js", "package/lib/worker.js", "package/package.json", "package/sluice.d.ts", "package/sluice.js", "package/stream.js"}
	if !slices.Equal(names, want) {
		t.Fatalf("tarball files %v, want %v", names, want)
	}
	if !bytes.Equal(files["package/dist/sluice.wasm"], wasmBytes) {
		t.Error("dist/sluice.wasm is not sluice.wasm.br decoded")
	}
	zr, err := gzip.NewReader(bytes.NewReader(files["package/dist/sluice.wasm.gz"]))
	if err != nil {
		t.Fatalf("dist/sluice.wasm.gz: %v", err)
	}
	if gz, err := io.ReadAll(zr); err != nil || !bytes.Equal(gz, wasmBytes) {
		t.Errorf("dist/sluice.wasm.gz is not sluice.wasm gzipped: %v", err)
	}
	for _, name := range []string{"sluice.js", "stream.js", "lib/base.js", "dist/wasm_exec.js", "dist/sluice.wasm.br", "dist/sluice.wasm.d.ts", "install.mjs", "LICENSE"} {
		if !bytes.Equal(files["package/"+name], fsys[name].Data) {
			t.Errorf("%s differs from the embedded file", name)
		}
	}
	var p map[string]any
	if err := json.Unmarshal(files["package/package.json"], &p); err != nil {
		t.Fatal(err)
	}
	if p["version"] != "1.4.2" || p["scripts"] != nil || p["name"] != "@sluicehq/sluice" {
		t.Errorf("package.json %v: want version 1.4.2, no scripts", p)
	}
	again := get(h, http.MethodGet, "/sluice.tgz", nil)
	if !bytes.Equal(body(t, again), tgz) || again.Header.Get("ETag") != resp.Header.Get("ETag") {
		t.Error("a second request got other bytes or another ETag")
	}
	if h2 := handler(t, fsys, &Options{Version: "v1.4.2"}); !bytes.Equal(body(t, get(h2, http.MethodGet, "/sluice.tgz", nil)), tgz) {
		t.Error("two edges of one version serve different tarballs")
	}
}

// TestEmbeddedTarball checks the package of this build against its own
// package.json: it holds what npm would pack (the files listed, the
// manifest, README and LICENSE).
func TestEmbeddedTarball(t *testing.T) {
	t.Parallel()
	h, err := New(&Options{Version: "v9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	files := untar(t, body(t, get(h, http.MethodGet, "/sluice.tgz", nil)))
	var p struct {
		Version string   `json:"version"`
		Files   []string `json:"files"`
	}
	if err := json.Unmarshal(files["package/package.json"], &p); err != nil {
		t.Fatal(err)
	}
	if p.Version != "9.9.9" {
		t.Errorf("version %q", p.Version)
	}
	listed := 0
	for _, f := range append(p.Files, "package.json", "README.md", "LICENSE") {
		n := 0
		for name := range files {
			if ok, _ := path.Match("package/"+f, name); ok {
				n++
			}
		}
		if n == 0 {
			t.Errorf("the tarball lacks %s", f)
		}
		listed += n
	}
	if len(files) != listed {
		t.Errorf("the tarball holds %d files, package.json names %d (with the three npm adds)", len(files), listed)
	}
	if w := files["package/dist/sluice.wasm"]; !bytes.HasPrefix(w, []byte("\x00asm")) {
		t.Error("dist/sluice.wasm is not WebAssembly")
	}
}
