package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEdgeFlagsFromEnvironment: every edge flag has its SLUICE_
// variable, which is written over the configuration file as the flag
// would be, and which the command line's flag overrides. The container
// image names its configuration file this way (SLUICE_CONFIG).
func TestEdgeFlagsFromEnvironment(t *testing.T) {
	s := stdio{in: strings.NewReader(""), out: io.Discard, errw: io.Discard}
	dir := t.TempDir()
	path := filepath.Join(dir, "edge.yaml")
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:1111\nlog:\n  level: debug\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	t.Setenv("SLUICE_CONFIG", path)
	t.Setenv("SLUICE_DATA_DIR", data)
	t.Setenv("SLUICE_ADMIN_LISTEN", "127.0.0.1:9999")
	t.Setenv("SLUICE_LISTEN", "127.0.0.1:2222")
	t.Setenv("SLUICE_LOG_LEVEL", "") // empty: unset
	cfg, _, err := edgeConfig(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:2222" || cfg.Cluster.DataDir != data || cfg.Admin.Listen != "127.0.0.1:9999" || cfg.Log.Level != "debug" {
		t.Fatalf("listen %q, data_dir %q, admin %q, log level %q: want the environment's over the file's, and the file's level",
			cfg.Listen, cfg.Cluster.DataDir, cfg.Admin.Listen, cfg.Log.Level)
	}
	cfg, _, err = edgeConfig([]string{"--listen", "127.0.0.1:3333"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:3333" || cfg.Cluster.DataDir != data {
		t.Fatalf("listen %q, data_dir %q: want the command line's listen and the environment's data_dir", cfg.Listen, cfg.Cluster.DataDir)
	}
}

// TestCheckConfigNotFromEnvironment: an environment kept for a service
// must not turn every start into a check that exits, nor into a usage
// error (--strict without --check-config).
func TestCheckConfigNotFromEnvironment(t *testing.T) {
	s := stdio{in: strings.NewReader(""), out: io.Discard, errw: io.Discard}
	t.Setenv("SLUICE_CHECK_CONFIG", filepath.Join(t.TempDir(), "edge.yaml"))
	t.Setenv("SLUICE_STRICT", "true")
	_, f, err := edgeConfig(nil, s)
	if err != nil || f.checkPath != "" || f.strict {
		t.Fatalf("with SLUICE_CHECK_CONFIG and SLUICE_STRICT set: check %q, strict %v, %v; want a plain start", f.checkPath, f.strict, err)
	}
}

// TestSetFromEnvLists: a repeatable flag takes a comma-separated list;
// a value the flag refuses is a usage error naming the variable.
func TestSetFromEnvLists(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SLUICE_DOMAIN": "a.example.com, b.example.com", "SLUICE_WORKERS": "many"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var domains []string
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.Func("domain", "", func(v string) error { domains = append(domains, v); return nil })
	if err := setFromEnv(fs, lookup); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.example.com", "b.example.com"}; !reflect.DeepEqual(domains, want) {
		t.Fatalf("domains %q, want %q", domains, want)
	}
	fs.Int("workers", 1, "")
	err := setFromEnv(fs, lookup)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `SLUICE_WORKERS="many"`) {
		t.Fatalf("SLUICE_WORKERS=many for an int flag: %v", err)
	}
}
