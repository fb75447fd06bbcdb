package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// TestVersionCommand checks that `sluice version`, `sluice --version` and
// `sluice -v` print the same four lines: the version this binary reports
// everywhere (Version), its commit, the Go release and the protocol; and
// that --short prints the version alone.
func TestVersionCommand(t *testing.T) {
	var first string
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}, {"-version"}} {
		var out, errw bytes.Buffer
		if code := run(args, stdio{out: &out, errw: &errw}); code != 0 {
			t.Fatalf("sluice %s exited %d: %s", strings.Join(args, " "), code, errw.String())
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 4 || lines[0] != "sluice "+Version() ||
			!strings.HasPrefix(lines[1], "  commit:   ") ||
			lines[2] != "  go:       "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH ||
			lines[3] != "  protocol: RTM v2 (codecs json, cbor, msgpack)" {
			t.Errorf("sluice %s printed %q, want the version, commit, go and protocol lines", args[0], out.String())
		}
		if first == "" {
			first = out.String()
		} else if out.String() != first {
			t.Errorf("sluice %s printed %q, sluice version %q", args[0], out.String(), first)
		}
	}
	var out, errw bytes.Buffer
	if code := run([]string{"version", "--short"}, stdio{out: &out, errw: &errw}); code != 0 || out.String() != Version()+"\n" {
		t.Errorf("sluice version --short exited %d and printed %q, want %q", code, out.String(), Version()+"\n")
	}
	errw.Reset()
	if code := run([]string{"version", "now"}, stdio{out: &out, errw: &errw}); code != 2 {
		t.Errorf("sluice version now exited %d (%s), want 2 (usage)", code, errw.String())
	}
}
