package e2e

// The JavaScript package in Node.js: installed as a file: dependency on
// client-js as a fresh clone holds it (sluice.wasm only brotli-compressed),
// then run by node against an edge (client-js/testdata/node/roundtrip.mjs).

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// nodeResult is what roundtrip.mjs prints.
type nodeResult struct {
	OK        bool   `json:"ok"`
	Received  []any  `json:"received"`
	WebSocket string `json:"webSocket"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// checkoutFiles are client-js's files as a clone of the repository has
// them: the package's (package.json "files") but dist/sluice.wasm and
// dist/sluice.wasm.gz, which `make wasm` writes and git ignores, and the
// Node.js application of testdata/node, which depends on it as "file:../..".
// The modules under lib/ are added (libFiles).
var checkoutFiles = []string{
	"package.json", "README.md", "LICENSE", "install.mjs", "sluice.js", "stream.js", "sluice.d.ts",
	"dist/sluice.wasm.br", "dist/sluice.wasm.d.ts", "dist/wasm_exec.js",
	"testdata/node/package.json", "testdata/node/package-lock.json", "testdata/node/.npmrc", "testdata/node/roundtrip.mjs",
}

// libFiles are the modules sluice.js imports, as package.json's "lib/*.js"
// names them.
func libFiles(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("..", "client-js", "lib", "*.js"))
	if err != nil || len(m) == 0 {
		t.Fatalf("client-js/lib/*.js: none (%v)", err)
	}
	for i := range m {
		m[i] = filepath.ToSlash(strings.TrimPrefix(m[i], filepath.Join("..", "client-js")+string(filepath.Separator)))
	}
	return m
}

// installFromCheckout copies checkoutFiles to a directory of the test and
// installs the application there with npm ci (ws from the registry, the
// package as a link to the copy, whose install script writes dist/). It
// returns the copy's directory.
func installFromCheckout(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test runs the package in Node.js (`make test` installs node and npm when run as root; or apt-get install nodejs npm): %v", err)
		}
	}
	pkg := filepath.Join(t.TempDir(), "client-js")
	for _, name := range append(libFiles(t), checkoutFiles...) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(pkg, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join("..", "client-js", name), filepath.Join(pkg, name))
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = filepath.Join(pkg, "testdata", "node")
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in client-js/testdata/node: %v\n%s", err, out)
	}
	return pkg
}

// checkUnpacked checks the files install.mjs wrote: sluice.wasm.br
// decoded, and gzip of it.
func checkUnpacked(t *testing.T, pkg string) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(pkg, "dist", name))
		if err != nil {
			t.Fatalf("after npm ci: %v", err)
		}
		return b
	}
	want, err := io.ReadAll(brotli.NewReader(bytes.NewReader(read("sluice.wasm.br"))))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read("sluice.wasm"), want) {
		t.Fatal("dist/sluice.wasm is not dist/sluice.wasm.br decoded")
	}
	zr, err := gzip.NewReader(bytes.NewReader(read("sluice.wasm.gz")))
	if err != nil {
		t.Fatalf("dist/sluice.wasm.gz: %v", err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("dist/sluice.wasm.gz is not sluice.wasm gzipped: %v", err)
	}
}

// runNode runs roundtrip.mjs with node's flags and env added, and returns
// what it printed.
func runNode(t *testing.T, pkg string, flags, env []string, url, channel string, options map[string]any) nodeResult {
	t.Helper()
	opts, err := json.Marshal(options)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pageTimeout)
	defer cancel()
	args := append(append([]string{}, flags...), "roundtrip.mjs", url, channel, string(opts))
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = filepath.Join(pkg, "testdata", "node")
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	var r nodeResult
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		t.Fatalf("node %s printed %q: %v\nstderr:\n%s", strings.Join(args, " "), out, err, stderr.String())
	}
	return r
}

// TestNode runs the package in Node.js against an edge: with the ws
// package's WebSocket (Node.js 20 has none), with the runtime's own, with
// neither, with a sluice.wasm that cannot be loaded, and from the brotli
// file alone.
func TestNode(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	pkg := installFromCheckout(t)
	checkUnpacked(t, pkg)
	options := map[string]any{"appkey": "e2e", "role": "publisher", "secret": pubSecret, "minBackoff": 10, "maxBackoff": 200}
	pub := publisher(t, e.url, "json")
	watcher := dial(t, e.url, client.Options{})

	// roundTrip runs the script on a channel of its own, with a message
	// published before, and checks what the page and a Go subscriber got.
	roundTrip := func(t *testing.T, channel string, flags, env []string, webSocket string) {
		t.Helper()
		fromNode := make(chan client.Message, 1)
		if _, err := watcher.Subscribe(ctxFor(t), channel, nil, func(m client.Message) { fromNode <- m }); err != nil {
			t.Fatal(err)
		}
		if _, err := pub.Publish(ctxFor(t), channel, map[string]any{"from": "go"}); err != nil {
			t.Fatal(err)
		}
		poll.Recv(t, "the Go message", fromNode)
		r := runNode(t, pkg, flags, env, e.url, channel, options)
		want := []any{map[string]any{"from": "go"}, map[string]any{"from": "node"}}
		if !r.OK || !reflect.DeepEqual(r.Received, want) || r.WebSocket != webSocket {
			t.Fatalf("node: %+v; want ok, received %v, over the %s WebSocket", r, want, webSocket)
		}
		if m := poll.Recv(t, "the message from node", fromNode); !reflect.DeepEqual(m.Value, map[string]any{"from": "node"}) {
			t.Fatalf("Go received %v from node", m.Value)
		}
	}

	// --no-experimental-websocket: no global WebSocket, as in Node.js 20
	// (and 22 with the flag), whatever the node running the test.
	noGlobal := []string{"--no-experimental-websocket"}
	t.Run("WebSocketPassedIn", func(t *testing.T) {
		roundTrip(t, "node.ws", noGlobal, []string{"SLUICE_WS_PACKAGE=1"}, "ws")
	})
	t.Run("RuntimeWebSocket", func(t *testing.T) {
		roundTrip(t, "node.runtime", []string{"--experimental-websocket"}, nil, "runtime")
	})
	t.Run("NoWebSocket", func(t *testing.T) {
		r := runNode(t, pkg, noGlobal, nil, e.url, "node.none", options)
		if r.OK || r.Code != "invalid_options" || !strings.Contains(r.Message, "{WebSocket}") {
			t.Fatalf("node without a WebSocket: %+v; want invalid_options saying to pass {WebSocket}", r)
		}
	})
	t.Run("LoadFailureIsShort", func(t *testing.T) {
		page := "<!doctype html><html><head><title>404 Not Found</title><style>h1 {color: red}</style></head>" +
			"<body><h1>Not Found</h1><p>Nothing here.</p>" + strings.Repeat("<p>padding</p>", 500) + "</body></html>"
		site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, page)
		}))
		defer site.Close()
		with := map[string]any{"wasmURL": site.URL + "/sluice.wasm"}
		for k, v := range options {
			with[k] = v
		}
		r := runNode(t, pkg, []string{"--experimental-websocket"}, nil, e.url, "node.404", with)
		if r.OK || r.Code != "load_failed" || !strings.Contains(r.Message, "HTTP 404") || !strings.Contains(r.Message, "Not Found") ||
			strings.Contains(r.Message, "<") || strings.Count(r.Message, "padding") > 20 || len(r.Message) > 400 {
			t.Fatalf("a 404 for sluice.wasm: %+v; want load_failed with the status and a short excerpt of the page", r)
		}
	})
	t.Run("BrotliFileOnly", func(t *testing.T) {
		// npm may not run install scripts (--ignore-scripts, other
		// package managers): Node.js then decodes dist/sluice.wasm.br.
		if err := os.Remove(filepath.Join(pkg, "dist", "sluice.wasm")); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, "node.br", []string{"--experimental-websocket"}, nil, "runtime")
	})
}
