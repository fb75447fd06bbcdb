package clientjs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// generated are the package's files that `make wasm` builds and the
// repository does not hold, by what the repository holds instead (which
// install.mjs decodes them from).
var generated = map[string]string{"dist/sluice.wasm": "dist/sluice.wasm.br", "dist/sluice.wasm.gz": "dist/sluice.wasm.br"}

// exists checks a file of the package is in this directory, or what it is
// built from.
func exists(t *testing.T, what, name string) {
	t.Helper()
	name = strings.TrimPrefix(name, "./")
	if src, ok := generated[name]; ok {
		name = src
	}
	if m, err := filepath.Glob(name); err != nil || len(m) == 0 {
		t.Errorf("package.json %s names %s: no such file (%v)", what, name, err)
	}
}

// TestPackageJSON checks that package.json describes a package npm can
// publish and bundlers and TypeScript resolve: its license, its types,
// and that every file it names is there.
func TestPackageJSON(t *testing.T) {
	b, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Name    string                     `json:"name"`
		Version string                     `json:"version"`
		License string                     `json:"license"`
		Type    string                     `json:"type"`
		Types   string                     `json:"types"`
		Files   []string                   `json:"files"`
		Exports map[string]json.RawMessage `json:"exports"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	if p.Name != "@sluicehq/sluice" || p.License != "Apache-2.0" || p.Type != "module" || p.Version == "" {
		t.Errorf("package.json: name %q, license %q, type %q, version %q", p.Name, p.License, p.Type, p.Version)
	}
	exists(t, "types", p.Types)
	for _, f := range p.Files {
		exists(t, "files", f)
	}
	var root struct{ Types, Default string }
	if err := json.Unmarshal(p.Exports["."], &root); err != nil || root.Types != p.Types || root.Default != "./sluice.js" {
		t.Errorf(`exports["."] = %s, want types %s and default ./sluice.js`, p.Exports["."], p.Types)
	}
	for sub, target := range p.Exports {
		if sub == "." {
			continue
		}
		var path string
		if err := json.Unmarshal(target, &path); err == nil {
			exists(t, "exports", path)
			continue
		}
		var typed struct{ Types, Default string }
		if err := json.Unmarshal(target, &typed); err != nil || typed.Types == "" || typed.Default == "" {
			t.Errorf("exports[%q] = %s, want a path or {types, default}", sub, target)
			continue
		}
		exists(t, "exports", typed.Types)
		exists(t, "exports", typed.Default)
	}
	// The bundler recipe `import wasmURL from
	// "@sluicehq/sluice/dist/sluice.wasm"` compiles only with a declaration
	// (make typecheck compiles it).
	var wasm struct{ Types string }
	if err := json.Unmarshal(p.Exports["./dist/sluice.wasm"], &wasm); err != nil || wasm.Types != "./dist/sluice.wasm.d.ts" {
		t.Errorf(`exports["./dist/sluice.wasm"] = %s, want types ./dist/sluice.wasm.d.ts`, p.Exports["./dist/sluice.wasm"])
	}
}

// TestNoRegistryURLs checks the npm files committed under testdata: a
// package-lock.json without resolved URLs (npm fetches by name and
// version and checks the integrity hash), kept so by an .npmrc.
func TestNoRegistryURLs(t *testing.T) {
	locks, err := filepath.Glob("testdata/*/package-lock.json")
	if err != nil || len(locks) == 0 {
		t.Fatalf("no package-lock.json under testdata: %v", err)
	}
	for _, lock := range locks {
		b, err := os.ReadFile(lock)
		if err != nil {
			t.Fatal(err)
		}
		var l struct {
			Packages map[string]struct {
				Resolved  string `json:"resolved"`
				Link      bool   `json:"link"`
				Integrity string `json:"integrity"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatalf("%s: %v", lock, err)
		}
		for name, pkg := range l.Packages {
			if strings.Contains(pkg.Resolved, "://") {
				t.Errorf("%s: %s is resolved to a URL; delete the resolved field (the .npmrc beside it keeps npm from writing it)", lock, name)
			}
			if strings.HasPrefix(name, "node_modules/") && !pkg.Link && pkg.Integrity == "" {
				t.Errorf("%s: %s has no integrity hash", lock, name)
			}
		}
		rc, err := os.ReadFile(filepath.Join(filepath.Dir(lock), ".npmrc"))
		if err != nil || !strings.Contains(string(rc), "omit-lockfile-registry-resolved=true") {
			t.Errorf("%s: no .npmrc beside it with omit-lockfile-registry-resolved=true: %v", lock, err)
		}
	}
}

// TestLicense checks that the package's LICENSE, which the edge's npm
// package carries, is the repository's.
func TestLicense(t *testing.T) {
	ours, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := os.ReadFile("../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if string(ours) != string(repo) || !strings.Contains(string(ours), "Apache License") {
		t.Error("client-js/LICENSE is not the repository's LICENSE (Apache-2.0): copy it")
	}
}
