package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	const rev = "7c490e839c4e84d7326540a28d4ece9d48edac2c"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tt := range []struct {
		name    string
		ldflags string
		info    *debug.BuildInfo
		want    string
	}{
		{name: "ldflags win", ldflags: "v1.4.0", info: &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, want: "v1.4.0"},
		{name: "go install at a tag", info: &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, want: "v1.3.0"},
		{name: "go build in a checkout", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201113523-7c490e839c4e+dirty"}, Settings: vcs("true")}, want: "v0.0.0-20261201113523-7c490e839c4e+dirty"},
		{name: "revision without a version", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")}, want: "dev-7c490e839c4e"},
		{name: "dirty revision without a version", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")}, want: "dev-7c490e839c4e+dirty"},
		{name: "nothing recorded", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, want: "dev"},
		{name: "no build info", want: "dev"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.ldflags, tt.info); got != tt.want {
				t.Errorf("versionOf = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionCommand checks that `sluice version` prints what the build
// info of this very binary says (the test binary has one too).
func TestVersionCommand(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("the test binary has no build info")
	}
	var out bytes.Buffer
	if err := runVersion(context.Background(), nil, stdio{out: &out, errw: &out}); err != nil {
		t.Fatal(err)
	}
	want := "sluice " + versionOf(version, info) + "\n"
	if out.String() != want {
		t.Errorf("sluice version printed %q, want %q", out.String(), want)
	}
}
