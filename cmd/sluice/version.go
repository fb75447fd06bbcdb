package main

import (
	"runtime/debug"
	"sync"
)

// version is set at release time with -ldflags "-X main.version=v1.2.3";
// when it is not, Version reads what the Go toolchain recorded.
var version = ""

// Version is what `sluice version`, the banner and sluice_build_info
// report.
var Version = sync.OnceValue(func() string {
	info, _ := debug.ReadBuildInfo()
	return versionOf(version, info)
})

// versionOf picks the most precise version known: the one set with
// -ldflags; else the main module's version, which `go install
// github.com/sluicehq/sluice/cmd/sluice@v1.2.3` records as v1.2.3 and
// `go build` in a git checkout as a pseudo-version naming the commit
// (v0.0.0-20261201113523-7c490e839c4e, "+dirty" with uncommitted
// changes); else the bare VCS revision, when the toolchain recorded one
// but no version ("(devel)"); else "dev" (built with -buildvcs=false,
// or outside a checkout).
func versionOf(ldflags string, info *debug.BuildInfo) string {
	if ldflags != "" {
		return ldflags
	}
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "dev-" + rev
}
