// Package version is the one version scheme of Sluice's builds: a binary
// reports the Go module version of the commit it was built from, the
// version `go install github.com/sluicehq/sluice/cmd/sluice@COMMIT`
// records. That is a release's tag (v1.2.3) on a tagged commit, else a
// pseudo-version naming the commit and its time
// (v0.0.0-20261201113523-7c490e839c4e), with "+dirty" when the tree had
// uncommitted changes. The npm package is the same without its "v".
//
// A binary learns it from one of three places, in this order: what the
// Makefile wrote with -ldflags -X (Stamp, computed from git by FromGit,
// since the go command records nothing in a git worktree or with
// -buildvcs=false); what the go command recorded (go install at a version
// or commit, go build in a clone); else nothing, and it is Unknown.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Unknown is the version of a build that recorded none (go build
// -buildvcs=false outside the Makefile, or outside a checkout): a
// pre-release of v0.0.0, so still a valid module and npm version, and the
// one client-js/package.json carries in the tree.
const Unknown = "v0.0.0-dev"

// Protocol is the wire protocol the edge speaks and the clients speak.
const Protocol = "RTM v2"

// Stamp is what the Makefile writes into a binary (-ldflags -X); empty
// fields are unknown.
type Stamp struct {
	Version string // the module version (or a release's, from VERSION=)
	Commit  string // the full revision
	Time    string // the commit's time, RFC 3339
}

// Build is what a binary knows of its own build.
type Build struct {
	Version  string    // Unknown when nothing was recorded
	Commit   string    // the revision, 12 hex digits or more; "" when not recorded
	Time     time.Time // the commit's time; zero when not recorded
	Modified bool      // built from a tree with uncommitted changes
	Go       string    // the Go release and platform that built it
}

// Resolve returns the build that st (from -ldflags) and info (from
// debug.ReadBuildInfo, nil if none) describe, by the package's order.
func Resolve(st Stamp, info *debug.BuildInfo) Build {
	b := Build{Version: Unknown, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	var vcsRev, vcsTime string
	var vcsDirty bool
	if info != nil {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRev = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				vcsDirty = s.Value == "true"
			}
		}
	}
	switch {
	case st.Version != "":
		b.Version, b.Commit = st.Version, st.Commit
		b.Time, _ = time.Parse(time.RFC3339, st.Time)
	case info != nil && info.Main.Version != "" && info.Main.Version != "(devel)":
		b.Version, b.Commit, b.Modified = info.Main.Version, vcsRev, vcsDirty
		b.Time, _ = time.Parse(time.RFC3339, vcsTime)
		if b.Commit == "" { // go install at a commit: its pseudo-version names it
			b.Commit, b.Time = fromPseudo(b.Version)
		}
	case vcsRev != "":
		// A go command that stamped the revision but not the module
		// version: the pseudo-version of the commit, without the tags
		// the go command would have looked at.
		b.Commit, b.Modified = vcsRev, vcsDirty
		b.Time, _ = time.Parse(time.RFC3339, vcsTime)
		b.Version = Pseudo("", b.Time, vcsRev, vcsDirty)
	}
	b.Modified = b.Modified || strings.HasSuffix(b.Version, "+dirty")
	return b
}

// pseudoTail matches the end of a pseudo-version: the commit's time and
// its revision's first 12 hex digits, and any build metadata.
var pseudoTail = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+[0-9A-Za-z.-]+)?$`)

// fromPseudo returns the revision and time a pseudo-version names; ""
// and zero for a release's version.
func fromPseudo(v string) (string, time.Time) {
	m := pseudoTail.FindStringSubmatch(v)
	if m == nil {
		return "", time.Time{}
	}
	t, err := time.Parse(pseudoTime, m[1])
	if err != nil {
		return "", time.Time{}
	}
	return m[2], t
}

// ShortCommit is the commit's first 12 hex digits, as pseudo-versions
// and git abbreviate it; "" when unknown.
func (b Build) ShortCommit() string {
	if len(b.Commit) > 12 {
		return b.Commit[:12]
	}
	return b.Commit
}

// NPM is the npm package's version: the module version without its "v".
func NPM(v string) string { return strings.TrimPrefix(v, "v") }

// Text is what `sluice version` prints: the version, then the commit, the
// Go release and the protocol, one to a line. codecs are the protocol's
// encodings, as the edge negotiates them.
func (b Build) Text(codecs []string) string {
	commit := "unknown (not recorded by this build)"
	if c := b.ShortCommit(); c != "" {
		commit = c
		if !b.Time.IsZero() {
			commit += " of " + b.Time.UTC().Format(time.RFC3339)
		}
		if b.Modified {
			commit += ", with uncommitted changes"
		}
	}
	return fmt.Sprintf("sluice %s\n  commit:   %s\n  go:       %s\n  protocol: %s (codecs %s)\n",
		b.Version, commit, b.Go, Protocol, strings.Join(codecs, ", "))
}
