//go:build !js

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// heavy are packages the browser build must not link, with what they
// would cost (docs/browser.md): each was cut from sluice.wasm, and a
// stray import brings it back whole, whatever the linker then drops.
var heavy = map[string]string{
	"fmt":                            "with os and reflect, 105 KB gzipped",
	"os":                             "its files and poller",
	"reflect":                        "its method tables, once anything calls by reflection",
	"runtime/debug":                  "imports fmt and os",
	"encoding/binary":                "imports reflect",
	"encoding/base64":                "4 KB gzipped; the browser has atob and btoa",
	"encoding/json":                  "reflection; the browser speaks msgpack only",
	"log/slog":                       "links encoding/json",
	"net":                            "the browser opens the connection itself",
	"net/http":                       "with crypto/tls, 400 KB gzipped",
	"net/url":                        "the browser has URL",
	"math/big":                       "the CBOR codec's",
	"regexp":                         "a hand-written check instead",
	"crypto/md5":                     "links the FIPS 140 module; md5.go instead",
	"github.com/vmihailenco/msgpack": "the msgpack library: 210 KB gzipped",
	"github.com/fxamacker/cbor":      "the CBOR library",
	"github.com/coder/websocket":     "links net/http",
}

// TestBrowserBuildDeps lists what sluice.wasm links (go list -deps for
// js/wasm) and fails on any package of heavy.
func TestBrowserBuildDeps(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps for js/wasm: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		for h, why := range heavy {
			if p == h || strings.HasPrefix(p, h+"/") {
				t.Errorf("the browser build links %s (%s)", p, why)
			}
		}
	}
}
