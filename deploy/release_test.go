package deploy

// `make release`, in part: the binaries with their version stamped and
// their checksums, for this machine's platform only (the four of a
// release are the same build for other GOOS/GOARCH), and the checks it
// starts with.

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// makeRelease runs a target of the Makefile; it returns what make
// printed and whether it succeeded.
func makeRelease(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	out, err := exec.Command("make", append([]string{"-C", "..", "--no-print-directory"}, args...)...).CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// TestReleaseBinaries builds the release binary of this platform as
// `make release` does, runs it to see the version it was stamped with,
// and checks its line in SHA256SUMS.
func TestReleaseBinaries(t *testing.T) {
	t.Parallel()
	const version = "v1.9.8-release.test"
	dir := t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	if out, ok := makeRelease(t, "release-binaries", "release-sums",
		"VERSION="+version, "RELEASE_DIR="+dir, "RELEASE_PLATFORMS="+platform); !ok {
		t.Fatalf("make release-binaries release-sums:\n%s", out)
	}
	name := "sluice-" + version + "-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(dir, name)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), version) {
		t.Fatalf("%s version: %q, %v; want %s", name, out, err, version)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	// sha256sum's format, which `sha256sum -c SHA256SUMS` checks.
	if want := hex.EncodeToString(sum[:]) + "  " + name + "\n"; string(sums) != want {
		t.Fatalf("SHA256SUMS:\n%s\nwant:\n%s", sums, want)
	}
}

// TestReleaseCheck: a release needs a version vX.Y.Z and its section in
// the changelog.
func TestReleaseCheck(t *testing.T) {
	t.Parallel()
	changelog := filepath.Join(t.TempDir(), "CHANGELOG.md")
	if err := os.WriteFile(changelog, []byte("# Changelog\n\n## Unreleased\n\n## v1.2.3 - 2026-12-07\n\n- Things.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		ok      bool
		says    string
	}{
		{"v1.2.3", true, ""},
		{"v1.2.4", false, `has no section "## v1.2.4"`},
		{"v1.2", false, "is not a release tag"},
		{"1.2.3", false, "is not a release tag"},
		{"d78b534-dirty", false, "is not a release tag"},
		// The module's path has no /v2: the go command takes no v2 tag.
		{"v2.0.0", false, "is not a version of this module"},
	} {
		out, ok := makeRelease(t, "release-check", "VERSION="+tc.version, "CHANGELOG="+changelog)
		if ok != tc.ok || !strings.Contains(out, tc.says) {
			t.Errorf("make release-check VERSION=%s: ok %v, %q; want ok %v, saying %q", tc.version, ok, out, tc.ok, tc.says)
		}
	}
	// The repository's own changelog is there to be kept.
	if out, ok := makeRelease(t, "release-check", "VERSION=v0.0.0-none"); ok || !strings.Contains(out, `CHANGELOG.md has no section "## v0.0.0-none"`) {
		t.Fatalf("make release-check with the repository's CHANGELOG.md: %q", out)
	}
}
