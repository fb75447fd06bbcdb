package version

import (
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestOneVersionPerCommit builds the version of one commit each way a
// binary can be made, and checks they agree: the Makefile's stamp, go
// install at the commit, go build in a clone (whose stamping
// TestFromGitIsTheGoCommands checks against the go command itself); with
// VCS stamping off and no Makefile nothing names the commit, and the
// version is Unknown. The npm package's version is each without its v.
func TestOneVersionPerCommit(t *testing.T) {
	const rev = "7c490e839c4e84d7326540a28d4ece9d48edac2c"
	when := time.Date(2026, 12, 1, 11, 35, 23, 0, time.UTC)
	const pseudo = "v0.0.0-20261201113523-7c490e839c4e"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: when.Format(time.RFC3339)}, {Key: "vcs.modified", Value: modified}}
	}
	devel := debug.Module{Path: "github.com/sluicehq/sluice", Version: "(devel)"}
	for _, tt := range []struct {
		name       string
		stamp      Stamp
		info       *debug.BuildInfo
		version    string
		commit     string // the 12 digits, "" for none
		modified   bool
		noTime     bool
		npmVersion string
	}{
		{name: "make", stamp: Stamp{Version: pseudo, Commit: rev, Time: when.Format(time.RFC3339)}, info: &debug.BuildInfo{Main: devel},
			version: pseudo, commit: rev[:12]},
		{name: "make, dirty tree", stamp: Stamp{Version: pseudo + "+dirty", Commit: rev, Time: when.Format(time.RFC3339)},
			version: pseudo + "+dirty", commit: rev[:12], modified: true},
		{name: "make VERSION=v1.4.0", stamp: Stamp{Version: "v1.4.0", Commit: rev, Time: when.Format(time.RFC3339)},
			info: &debug.BuildInfo{Main: debug.Module{Version: pseudo}, Settings: vcs("false")}, version: "v1.4.0", commit: rev[:12]},
		{name: "go install @commit", info: &debug.BuildInfo{Main: debug.Module{Version: pseudo}}, version: pseudo, commit: rev[:12]},
		{name: "go install @v1.3.0", info: &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, version: "v1.3.0", noTime: true},
		{name: "go build in a clone", info: &debug.BuildInfo{Main: debug.Module{Version: pseudo}, Settings: vcs("false")},
			version: pseudo, commit: rev[:12]},
		{name: "go build in a dirty clone", info: &debug.BuildInfo{Main: debug.Module{Version: pseudo + "+dirty"}, Settings: vcs("true")},
			version: pseudo + "+dirty", commit: rev[:12], modified: true},
		{name: "a go command that stamps no module version", info: &debug.BuildInfo{Main: devel, Settings: vcs("false")},
			version: pseudo, commit: rev[:12]},
		{name: "VCS stamping off", info: &debug.BuildInfo{Main: devel}, version: Unknown, noTime: true},
		{name: "no build info", version: Unknown, noTime: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := Resolve(tt.stamp, tt.info)
			if b.Version != tt.version || b.ShortCommit() != tt.commit || b.Modified != tt.modified {
				t.Errorf("Resolve = %q, commit %q, modified %v; want %q, %q, %v", b.Version, b.ShortCommit(), b.Modified, tt.version, tt.commit, tt.modified)
			}
			if wantTime := !tt.noTime && tt.commit != ""; b.Time.Equal(when) != wantTime {
				t.Errorf("Resolve's commit time %v, want %v", b.Time, when)
			}
			if npm := NPM(b.Version); "v"+npm != b.Version {
				t.Errorf("NPM(%q) = %q, want it without its v", b.Version, npm)
			}
		})
	}
}

func TestPseudo(t *testing.T) {
	when := time.Date(2026, 12, 1, 11, 35, 23, 0, time.FixedZone("CET", 3600))
	const rev = "7c490e839c4e84d7326540a28d4ece9d48edac2c"
	for base, want := range map[string]string{
		"":            "v0.0.0-20261201103523-7c490e839c4e",
		"v1.2.3":      "v1.2.4-0.20261201103523-7c490e839c4e",
		"v0.9.0-rc.1": "v0.9.0-rc.1.0.20261201103523-7c490e839c4e",
		"v2.0.0":      "v0.0.0-20261201103523-7c490e839c4e", // not a version of this module
	} {
		if got := Pseudo(base, when, rev, false); got != want {
			t.Errorf("Pseudo(%q) = %q, want %q", base, got, want)
		}
	}
	if got := Pseudo("", when, rev, true); got != "v0.0.0-20261201103523-7c490e839c4e+dirty" {
		t.Errorf("Pseudo, dirty = %q", got)
	}
}

func TestHighestTag(t *testing.T) {
	for list, want := range map[string]string{
		"":                                  "",
		"v1.2.3\nv1.10.0\nv1.9.9":           "v1.10.0",
		"v1.0.0-rc.2\nv1.0.0-rc.10":         "v1.0.0-rc.10",
		"v1.0.0-rc.1\nv1.0.0":               "v1.0.0",
		"v1.0.0-alpha\nv1.0.0-alpha.1":      "v1.0.0-alpha.1",
		"v1.0.0-1\nv1.0.0-alpha":            "v1.0.0-alpha",
		"v2.0.0\nvbad\nv1.2\nv0.3.0+meta":   "",
		"v0.1.0\nv01.2.3\nv0.2.0\nrelease1": "v0.2.0",
	} {
		if got := highestTag(list); got != want {
			t.Errorf("highestTag(%q) = %q, want %q", strings.ReplaceAll(list, "\n", " "), got, want)
		}
	}
}

func TestText(t *testing.T) {
	b := Build{Version: "v0.0.0-20261201113523-7c490e839c4e+dirty", Commit: "7c490e839c4e84d7326540a28d4ece9d48edac2c",
		Time: time.Date(2026, 12, 1, 11, 35, 23, 0, time.UTC), Modified: true, Go: "go1.26.8 linux/amd64"}
	want := "sluice v0.0.0-20261201113523-7c490e839c4e+dirty\n" +
		"  commit:   7c490e839c4e of 2026-12-01T11:35:23Z, with uncommitted changes\n" +
		"  go:       go1.26.8 linux/amd64\n" +
		"  protocol: RTM v2 (codecs json, msgpack)\n"
	if got := b.Text([]string{"json", "msgpack"}); got != want {
		t.Errorf("Text =\n%s\nwant\n%s", got, want)
	}
	b = Build{Version: Unknown, Go: "go1.26.8 linux/amd64"}
	if got := b.Text([]string{"json"}); !strings.Contains(got, "  commit:   unknown (not recorded by this build)\n") {
		t.Errorf("Text of an unknown build =\n%s", got)
	}
}
