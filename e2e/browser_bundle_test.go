package e2e

// The npm package as an application uses it: installed with npm from the
// edge's /sluice.tgz, bundled with esbuild (in-process), the bundle served
// from a site of its own, so every page talks to the edge from another
// origin.

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/evanw/esbuild/pkg/api"
)

// bundlePage is the application's page: it loads the bundle.
const bundlePage = `<!doctype html><meta charset="utf-8"><title>bundled</title>
<script type="module" src="/assets/app.js"></script>`

// bundleApp is the application, importing the package by name. It
// exposes one call to the test: connect, subscribe, publish, receive
// what it published, close; or the code of the error that stopped it.
// WASM_IMPORT is replaced by each case.
const bundleApp = `import { Sluice } from "@sluicehq/sluice";
WASM_IMPORT
window.bundled = {
  async roundTrip(url, appkey, channel) {
    try {
      const client = await Sluice.connect(url, { appkey, wasmURL, minBackoff: 10, maxBackoff: 200 });
      let received;
      const got = new Promise((resolve) => (received = resolve));
      const sub = client.subscribe(channel, (message) => received(message));
      await sub.ready;
      await client.publish(channel, { text: "from a bundle" });
      const message = await got;
      await client.close();
      return { ok: true, message };
    } catch (e) {
      return { ok: false, code: e.code, message: String(e.message) };
    }
  },
};
`

// roundTrip is what bundled.roundTrip resolves with.
type roundTrip struct {
	OK      bool   `json:"ok"`
	Code    string `json:"code"`
	Message any    `json:"message"`
}

// installFromEdge installs the package as the package README says, with
// npm from the edge's /sluice.tgz, into a directory of its own, and
// returns its node_modules. npm's cache is the test's, so nothing another
// run left there is used.
func installFromEdge(t *testing.T, e *cmdEdge) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("this test installs the package with npm (`make test` installs it when run as root; or apt-get install npm): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "bundled-app", "private": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
		"http"+strings.TrimPrefix(e.url, "ws")+"/sluice.tgz")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install the edge's /sluice.tgz: %v\n%s", err, out)
	}
	// What npm installed is what the edge serves, built from this tree.
	pkg := filepath.Join(dir, "node_modules", "@sluicehq", "sluice")
	got, err := os.ReadFile(filepath.Join(pkg, "dist", "sluice.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	br, err := os.ReadFile(filepath.Join("..", "client-js", "dist", "sluice.wasm.br"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
	if err != nil {
		t.Fatalf("decode sluice.wasm.br: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("npm installed a dist/sluice.wasm that is not client-js/dist/sluice.wasm.br decoded")
	}
	zr, err := gzip.NewReader(bytes.NewReader(readFile(t, filepath.Join(pkg, "dist", "sluice.wasm.gz"))))
	if err != nil {
		t.Fatalf("dist/sluice.wasm.gz: %v", err)
	}
	if gz, err := io.ReadAll(zr); err != nil || !bytes.Equal(gz, want) {
		t.Fatalf("npm installed a dist/sluice.wasm.gz that is not sluice.wasm gzipped: %v", err)
	}
	for _, name := range []string{"sluice.js", "stream.js", "sluice.d.ts", "dist/wasm_exec.js", "dist/sluice.wasm.br", "dist/sluice.wasm.d.ts"} {
		a, errA := os.ReadFile(filepath.Join(pkg, name))
		b, errB := os.ReadFile(filepath.Join("..", "client-js", name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("npm installed a %s that is not client-js's: %v %v", name, errA, errB)
		}
	}
	return filepath.Join(dir, "node_modules")
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.WriteFile(to, readFile(t, from), 0o644); err != nil {
		t.Fatal(err)
	}
}

// site serves a directory and records the paths asked for.
type site struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func serveSite(t *testing.T, root string) *site {
	t.Helper()
	s := &site{}
	files := http.FileServer(http.Dir(root))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

// bundleSite bundles app (bundleApp with WASM_IMPORT replaced, importing
// the package from modules) into site/assets with esbuild, writes the
// page, and returns the site's directory.
func bundleSite(t *testing.T, modules, wasmImport string) string {
	t.Helper()
	return bundleSiteAs(t, api.FormatESModule, modules, wasmImport)
}

// bundleSiteAs is bundleSite in another format. In IIFE format esbuild
// warns that import.meta is empty, as the package README says.
func bundleSiteAs(t *testing.T, format api.Format, modules, wasmImport string) string {
	t.Helper()
	dir := t.TempDir()
	app := strings.Replace(bundleApp, "WASM_IMPORT", wasmImport, 1)
	if err := os.WriteFile(filepath.Join(dir, "app.js"), []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "site")
	res := api.Build(api.BuildOptions{
		AbsWorkingDir: dir,
		NodePaths:     []string{modules},
		EntryPoints:   []string{"app.js"},
		Bundle:        true,
		Format:        format,
		Outdir:        filepath.Join(root, "assets"),
		PublicPath:    "/assets",
		Loader:        map[string]api.Loader{".wasm": api.LoaderFile},
		Write:         true,
		LogLevel:      api.LogLevelSilent,
	})
	for _, m := range res.Errors {
		t.Errorf("esbuild: %s (%v)", m.Text, m.Location)
	}
	for _, m := range res.Warnings {
		if format != api.FormatIIFE || !strings.Contains(m.Text, `"import.meta" is not available`) {
			t.Errorf("esbuild warns: %s (%v)", m.Text, m.Location)
		}
	}
	if len(res.Errors) > 0 {
		t.FailNow()
	}
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte(bundlePage), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// openSite opens a site's page in a new tab and waits for the bundle.
func openSite(t *testing.T, b *chrome, s *site) *tab {
	t.Helper()
	p := b.newTab(t, "ws"+strings.TrimPrefix(s.URL, "http"))
	p.open("/")
	p.waitJS("the bundle", "typeof window.bundled === 'object'")
	return p
}

// TestBrowserBundle runs pages bundled with esbuild against an edge of
// another origin.
func TestBrowserBundle(t *testing.T) {
	b := startChrome(t)
	e := startBrowserEdge(t)
	modules := installFromEdge(t, e)
	want := map[string]any{"text": "from a bundle"}

	t.Run("WasmImportedWithTheFileLoader", func(t *testing.T) {
		// The way the package README gives for esbuild: import the
		// WebAssembly file as a URL and pass it. wasm_exec.js is bundled.
		s := serveSite(t, bundleSite(t, modules, `import wasmURL from "@sluicehq/sluice/dist/sluice.wasm";`))
		p := openSite(t, b, s)
		got := evalJS[roundTrip](p, `bundled.roundTrip("`+e.url+`", "`+browserAppkey+`", "open.bundle.file")`)
		if !got.OK || !reflect.DeepEqual(got.Message, want) {
			t.Fatalf("round trip: %+v\n%s", got, p.consoleText())
		}
		var wasm int
		for _, path := range s.requested() {
			if strings.Contains(path, "wasm_exec") {
				t.Errorf("the page fetched %s: wasm_exec.js should be in the bundle", path)
			}
			if strings.HasSuffix(path, ".wasm") {
				wasm++
			}
		}
		if wasm != 1 {
			t.Errorf("the page fetched %d .wasm files from its site, want 1: %v", wasm, s.requested())
		}
	})

	t.Run("WasmBesideTheBundle", func(t *testing.T) {
		// No option: sluice.wasm is looked for beside the bundle, in dist/.
		root := bundleSite(t, modules, `const wasmURL = undefined;`)
		if err := os.MkdirAll(filepath.Join(root, "assets", "dist"), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(modules, "@sluicehq", "sluice", "dist", "sluice.wasm"), filepath.Join(root, "assets", "dist", "sluice.wasm"))
		s := serveSite(t, root)
		p := openSite(t, b, s)
		got := evalJS[roundTrip](p, `bundled.roundTrip("`+e.url+`", "`+browserAppkey+`", "open.bundle.beside")`)
		if !got.OK || !reflect.DeepEqual(got.Message, want) {
			t.Fatalf("round trip: %+v\n%s", got, p.consoleText())
		}
		if !slices.Contains(s.requested(), "/assets/dist/sluice.wasm") {
			t.Errorf("sluice.wasm not fetched from beside the bundle: %v", s.requested())
		}
	})

	t.Run("WasmMissingSaysWhatToDo", func(t *testing.T) {
		s := serveSite(t, bundleSite(t, modules, `const wasmURL = undefined;`))
		p := openSite(t, b, s)
		got := evalJS[roundTrip](p, `bundled.roundTrip("`+e.url+`", "`+browserAppkey+`", "open.bundle.missing")`)
		if msg, _ := got.Message.(string); got.OK || got.Code != "load_failed" || !strings.Contains(msg, "pass {wasmURL}") || !strings.Contains(msg, "HTTP 404") {
			t.Fatalf("without sluice.wasm: %+v, want load_failed with the status, saying to pass {wasmURL}", got)
		}
	})

	t.Run("IIFEBundle", func(t *testing.T) {
		// No import.meta.url: without {wasmURL} the error says to pass
		// it; with it, the bundle works.
		p := openSite(t, b, serveSite(t, bundleSiteAs(t, api.FormatIIFE, modules, `const wasmURL = undefined;`)))
		got := evalJS[roundTrip](p, `bundled.roundTrip("`+e.url+`", "`+browserAppkey+`", "open.bundle.iife")`)
		if got.OK || got.Code != "load_failed" || !strings.Contains(got.Message.(string), "pass {wasmURL}") {
			t.Fatalf("IIFE without wasmURL: %+v, want load_failed saying to pass {wasmURL}", got)
		}
		p = openSite(t, b, serveSite(t, bundleSiteAs(t, api.FormatIIFE, modules, `import wasmURL from "@sluicehq/sluice/dist/sluice.wasm";`)))
		got = evalJS[roundTrip](p, `bundled.roundTrip("`+e.url+`", "`+browserAppkey+`", "open.bundle.iife")`)
		if !got.OK || !reflect.DeepEqual(got.Message, want) {
			t.Fatalf("IIFE with wasmURL: %+v\n%s", got, p.consoleText())
		}
	})

	t.Run("ErrorCodesAcrossOrigins", func(t *testing.T) {
		s := serveSite(t, bundleSite(t, modules, `import wasmURL from "@sluicehq/sluice/dist/sluice.wasm";`))
		p := openSite(t, b, s)
		// The edge lets the page read its refusal (CORS for an origin it
		// allows), so the RTM code survives.
		got := evalJS[roundTrip](p, `bundled.roundTrip("`+e.url+`", "no-such-app", "open.x")`)
		if got.OK || got.Code != "invalid_appkey" {
			t.Errorf("wrong appkey from another origin: %+v, want invalid_appkey", got)
		}
		// An edge that does not allow the page's origin tells it nothing:
		// the code says the WebSocket could not be opened.
		closed := startCmdEdge(t, "apps:\n  - appkey: browser\nallowed_origins: [app.example.com]\n")
		got = evalJS[roundTrip](p, `bundled.roundTrip("`+closed.url+`", "browser", "open.x")`)
		if got.OK || got.Code != "network" {
			t.Errorf("an origin the edge refuses: %+v, want network", got)
		}
	})
}
