package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/version"
)

// Set by the Makefile with -ldflags -X (go run ./internal/version/stamp):
// the version of the commit checked out, as package version computes it
// from git, the commit and its time (RFC 3339). Empty in a binary built
// otherwise, which reports what the go command recorded.
var (
	stampVersion    = ""
	stampCommit     = ""
	stampCommitTime = ""
)

// build is what this binary knows of its build (package version's scheme).
var build = sync.OnceValue(func() version.Build {
	info, _ := debug.ReadBuildInfo()
	return version.Resolve(version.Stamp{Version: stampVersion, Commit: stampCommit, Time: stampCommitTime}, info)
})

// Version is what `sluice version`, the banner, sluice_build_info and the
// npm package at /sluice.tgz (without its v) report.
func Version() string { return build().Version }

// runVersion prints the version, commit, Go release and protocol; with
// --short the version alone (what `make npm-pack` versions the package
// with).
func runVersion(_ context.Context, args []string, s stdio) error {
	fs := newFlagSet("version", "version [--short]\n\n"+
		"Prints the version (a release's, or the pseudo-version of the commit the binary\n"+
		"was built from, as `go install ...@COMMIT` records it), the commit, the Go\n"+
		"release and the protocol with its codecs.", s)
	short := fs.Bool("short", false, "print the version alone")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	if *short {
		_, err = fmt.Fprintln(s.out, Version())
		return err
	}
	_, err = fmt.Fprint(s.out, build().Text(server.Codecs()))
	return err
}
