package version

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testRepo is a git repository of a one-file module whose main prints
// the module version the go command stamped into it.
type testRepo struct {
	t   *testing.T
	dir string
	env []string
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test compares FromGit with the go command's stamping in a git repository: %v", err)
		}
	}
	r := &testRepo{t: t, dir: t.TempDir(), env: append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		// The go command stamps VCS information only with -buildvcs on
		// (this machine's go env may turn it off) and only in a clone
		// whose .git is a directory, as here. GOPROXY is left as it is:
		// with GOPROXY=off the go command ignores the tags (Go 1.26),
		// and a module without dependencies fetches nothing.
		"GOFLAGS=-buildvcs=true", "GOWORK=off", "CGO_ENABLED=0")}
	r.write("go.mod", "module example.com/m\n\ngo 1.24\n")
	r.write("main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"runtime/debug\"\n)\n\n"+
		"func main() {\n\tinfo, _ := debug.ReadBuildInfo()\n\tfmt.Print(info.Main.Version)\n}\n")
	r.run("git", "init", "-q")
	return r
}

func (r *testRepo) write(name, text string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(text), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) run(name string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit commits everything, at a commit time of its own.
func (r *testRepo) commit(msg, date string) {
	r.t.Helper()
	r.run("git", "add", "-A")
	r.run("git", "-c", "commit.gpgsign=false", "commit", "-q", "-m", msg, "--date", date)
	r.env = append(r.env, "GIT_COMMITTER_DATE="+date)
	r.run("git", "-c", "commit.gpgsign=false", "commit", "-q", "--amend", "--no-edit", "--date", date)
}

// goVersion builds the module (outside the tree, which it would dirty)
// and returns the version the go command stamped.
func (r *testRepo) goVersion() string {
	r.t.Helper()
	bin := filepath.Join(r.t.TempDir(), "m")
	r.run("go", "build", "-o", bin, ".")
	return r.run(bin)
}

// TestFromGitIsTheGoCommands checks that the Makefile's stamp is the
// version the go command records for the same tree: no tag, a release
// tag on the commit, commits past it, a pre-release, and a dirty tree.
func TestFromGitIsTheGoCommands(t *testing.T) {
	r := newTestRepo(t)
	check := func(state, want string) {
		t.Helper()
		st, err := FromGit(context.Background(), r.dir)
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		goV := r.goVersion()
		if st.Version != goV {
			t.Errorf("%s: FromGit says %q, the go command stamps %q", state, st.Version, goV)
		}
		if want != "" && !strings.HasPrefix(st.Version, want) {
			t.Errorf("%s: FromGit says %q, want it to start with %q", state, st.Version, want)
		}
		if head := r.run("git", "rev-parse", "HEAD"); st.Commit != head {
			t.Errorf("%s: FromGit's commit %q, want HEAD %q", state, st.Commit, head)
		}
	}
	r.commit("first", "2026-12-01T11:35:23+01:00")
	check("no tag", "v0.0.0-20261201103523-")
	r.run("git", "tag", "v0.1.0")
	r.run("git", "tag", "v0.0.9")
	r.run("git", "tag", "not-a-version")
	check("tagged v0.1.0", "v0.1.0")
	r.write("a.txt", "a")
	check("tagged, with an untracked file", "v0.1.0+dirty")
	r.commit("second", "2026-12-02T08:00:00Z")
	check("one commit past v0.1.0", "v0.1.1-0.20261202080000-")
	r.run("git", "tag", "v0.2.0-rc.1")
	r.write("b.txt", "b")
	r.commit("third", "2026-12-03T08:00:00Z")
	check("past a pre-release", "v0.2.0-rc.1.0.20261203080000-")
	r.write("b.txt", "changed")
	check("past a pre-release, modified", "v0.2.0-rc.1.0.20261203080000-")
}
