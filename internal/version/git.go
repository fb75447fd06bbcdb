package version

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// pseudoTime is the layout of a pseudo-version's time: the commit's, UTC.
const pseudoTime = "20060102150405"

// FromGit returns the stamp of the commit checked out in dir, with the
// version the go command records when it builds there (Go 1.24 and
// later, in a clone): the highest release tag on the commit, else a
// pseudo-version on the highest one among its ancestors; "+dirty" with
// uncommitted changes (untracked files count, as they do for the go
// command). Tags are those of this module: vMAJOR.MINOR.PATCH, with an
// optional pre-release, of major version 0 or 1 (the module path has no
// /vN suffix).
func FromGit(ctx context.Context, dir string) (Stamp, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "log.showsignature=false"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) && len(ee.Stderr) > 0 {
				err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
			}
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	head, err := git("log", "-1", "--format=%H %ct")
	if err != nil {
		return Stamp{}, err
	}
	rev, ct, _ := strings.Cut(head, " ")
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return Stamp{}, fmt.Errorf("git log: commit time %q: %w", ct, err)
	}
	when := time.Unix(secs, 0).UTC()
	status, err := git("status", "--porcelain")
	if err != nil {
		return Stamp{}, err
	}
	dirty := status != ""
	onHead, err := git("tag", "--points-at", "HEAD", "--list", "v*")
	if err != nil {
		return Stamp{}, err
	}
	v := highestTag(onHead)
	if v == "" {
		merged, err := git("tag", "--merged", "HEAD", "--list", "v*")
		if err != nil {
			return Stamp{}, err
		}
		v = Pseudo(highestTag(merged), when, rev, false)
	}
	if dirty {
		v += "+dirty"
	}
	return Stamp{Version: v, Commit: rev, Time: when.Format(time.RFC3339)}, nil
}

// Pseudo returns the pseudo-version of the commit rev made at t, on the
// release tag base ("" for none), as the go command makes it:
// v0.0.0-TIME-REV without a base, vX.Y.(Z+1)-0.TIME-REV on a release
// vX.Y.Z, vX.Y.Z-PRE.0.TIME-REV on a pre-release; "+dirty" with
// uncommitted changes.
func Pseudo(base string, t time.Time, rev string, dirty bool) string {
	if len(rev) > 12 {
		rev = rev[:12]
	}
	tail := t.UTC().Format(pseudoTime) + "-" + rev
	var v string
	switch sv, ok := parseSemver(base); {
	case !ok:
		v = "v0.0.0-" + tail
	case sv.pre != "":
		v = base + ".0." + tail
	default:
		v = fmt.Sprintf("v%d.%d.%d-0.%s", sv.major, sv.minor, sv.patch+1, tail)
	}
	if dirty {
		v += "+dirty"
	}
	return v
}

// semverTag matches a tag the go command takes as a version of this
// module: canonical semantic versions of major version 0 or 1.
var semverTag = regexp.MustCompile(`^v([01])\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-((?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*))?$`)

// semver is a parsed semantic version.
type semver struct {
	major, minor, patch int
	pre                 string
}

// Valid reports whether v is a release version of this module, as a tag
// or VERSION= gives it: vMAJOR.MINOR.PATCH with an optional pre-release,
// of major version 0 or 1.
func Valid(v string) bool {
	_, ok := parseSemver(v)
	return ok
}

func parseSemver(v string) (semver, bool) {
	m := semverTag.FindStringSubmatch(v)
	if m == nil {
		return semver{}, false
	}
	var s semver
	s.major, _ = strconv.Atoi(m[1])
	s.minor, _ = strconv.Atoi(m[2])
	s.patch, _ = strconv.Atoi(m[3])
	s.pre = m[4]
	return s, true
}

// highestTag returns the highest version among git's list of tags, one a
// line, ignoring those that are not versions of this module; "" if none.
func highestTag(list string) string {
	var best string
	var bestV semver
	for _, tag := range strings.Fields(list) {
		v, ok := parseSemver(tag)
		if ok && (best == "" || compare(v, bestV) > 0) {
			best, bestV = tag, v
		}
	}
	return best
}

// compare orders semantic versions by semver.org's precedence.
func compare(a, b semver) int {
	for _, d := range []int{a.major - b.major, a.minor - b.minor, a.patch - b.patch} {
		if d != 0 {
			return d
		}
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1 // a release follows its pre-releases
	case b.pre == "":
		return -1
	}
	return comparePre(strings.Split(a.pre, "."), strings.Split(b.pre, "."))
}

// comparePre orders pre-release identifiers: numeric ones numerically and
// below alphanumeric ones, which compare as text; a shorter list that is
// a prefix of the other comes first.
func comparePre(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, xerr := strconv.ParseUint(a[i], 10, 64)
		y, yerr := strconv.ParseUint(b[i], 10, 64)
		switch {
		case xerr == nil && yerr == nil && x != y:
			if x < y {
				return -1
			}
			return 1
		case xerr == nil && yerr != nil:
			return -1
		case xerr != nil && yerr == nil:
			return 1
		case a[i] != b[i]:
			return strings.Compare(a[i], b[i])
		}
	}
	return len(a) - len(b)
}
