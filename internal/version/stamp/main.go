// Command stamp prints the -ldflags that stamp a build of cmd/sluice
// with the version of the commit checked out (package version): the
// Makefile builds with them, so that `make build` reports what `go
// install` of the same commit does, in a git worktree or with
// -buildvcs=false too, where the go command records nothing.
//
//	go build -ldflags="$(go run ./internal/version/stamp)" ./cmd/sluice
//
// -version V reports V instead (a release built from a tree without its
// tag). Outside a git checkout it prints only that, and says on stderr
// that the binary reports what the go command recorded.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sluicehq/sluice/internal/version"
)

func main() {
	override := flag.String("version", "", "report this version (vX.Y.Z) instead of the commit's")
	flag.Parse()
	st, err := version.FromGit(context.Background(), ".")
	if err != nil {
		fmt.Fprintf(os.Stderr, "stamp: no version from git (%v): the binary reports what the go command recorded\n", err)
		st = version.Stamp{}
	}
	if *override != "" {
		v := "v" + strings.TrimPrefix(*override, "v")
		if !version.Valid(v) {
			fmt.Fprintf(os.Stderr, "stamp: -version %q is not a version of this module: want vMAJOR.MINOR.PATCH (major 0 or 1), with an optional -PRERELEASE\n", *override)
			os.Exit(2)
		}
		st.Version = v
	}
	var flags []string
	for _, f := range []struct{ name, value string }{
		{"main.stampVersion", st.Version}, {"main.stampCommit", st.Commit}, {"main.stampCommitTime", st.Time},
	} {
		if f.value != "" {
			flags = append(flags, "-X "+f.name+"="+f.value)
		}
	}
	fmt.Println(strings.Join(flags, " "))
}
