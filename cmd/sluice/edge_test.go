package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
)

func TestCheckConfig(t *testing.T) {
	t.Parallel()
	good := edgecmdtest.WriteConfig(t, "apps:\n  - appkey: my-app\n    jwt_key: \"q3Xv9+LmZ0rT8wBn2yKc4HdE6sJp1uAf7gQo5iWzR0M=\"\n")
	if code, out, errw := runSluice("edge", "--check-config", good); code != 0 || out != "config "+good+": valid\n" || errw != "" {
		t.Errorf("a valid file: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	// The example deployment still holds its placeholder key: valid, and
	// warned about.
	const deploy = "../../deploy/edge.yaml"
	code, out, errw := runSluice("edge", "--check-config", deploy)
	if code != 0 || out != "config "+deploy+": valid, with 1 warning(s)\n" ||
		!strings.Contains(errw, "warning: apps[0].jwt_key: it looks like a placeholder") {
		t.Errorf("deploy/edge.yaml: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	// --strict, as the deployment recipe runs it: the warning fails.
	code, out, errw = runSluice("edge", "--check-config", deploy, "--strict")
	if code != 1 || out != "" || !strings.Contains(errw, "warning: apps[0].jwt_key: it looks like a placeholder") ||
		!strings.HasSuffix(errw, "sluice edge: config "+deploy+": valid, but with 1 warning(s), which --strict refuses\n") {
		t.Errorf("deploy/edge.yaml --strict: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	if code, out, errw := runSluice("edge", "--check-config", good, "--strict"); code != 0 || out != "config "+good+": valid\n" || errw != "" {
		t.Errorf("a valid file without warnings, --strict: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	if code, _, errw := runSluice("edge", "--strict"); code != 2 || !strings.Contains(errw, "--strict is for --check-config") {
		t.Errorf("--strict alone: exit %d, stderr %q", code, errw)
	}
	bad := edgecmdtest.WriteConfig(t, "apps:\n  - appkey: my-app\n    roles:\n      default: {publsh: [\"*\"]}\n")
	if code, out, errw := runSluice("edge", "--check-config", bad); code != 1 || out != "" || !strings.Contains(errw, "publsh") {
		t.Errorf("an unknown key: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	if code, _, errw := runSluice("edge", "--check-config", good, "--config", bad); code != 2 || !strings.Contains(errw, "different files") {
		t.Errorf("two files: exit %d, stderr %q", code, errw)
	}
	if code, _, errw := runSluice("edge", "--check-config", good, "--log-level", "loud"); code == 0 {
		t.Errorf("a bad flag with --check-config: exit 0, stderr %q", errw)
	}
}
