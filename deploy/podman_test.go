package deploy

// The container tests run the image (image_test.go) and the compose file
// (compose_test.go) with podman, as root (rootful: published ports, CNI
// networks). `make podman` installs what they need.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// imageVersion is the version the test image is built with, which its
// label and its binary must say.
const imageVersion = "v0.0.0-image.test"

// containers is podman as these tests run it: the image built by `make
// image` from this tree, Caddy's image for the compose file, and the
// environment every podman command gets.
type containers struct {
	env   []string
	image string // localhost/sluice-test:PID
	caddy string // localhost/sluice-test-caddy:PID
	dir   string // containers.conf, the Caddy image's context
}

var (
	podmanOnce sync.Once
	podmanRT   *containers
	podmanErr  error
	names      atomic.Int64
)

// podmanRuntime returns the runtime, building the images the first time:
// every test of the process shares them; TestMain removes them.
func podmanRuntime(t *testing.T) *containers {
	t.Helper()
	for _, tool := range []string{"podman", "runc", "podman-compose"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the container tests need %s: `make podman` installs it (as root)", tool)
		}
	}
	if _, err := os.Stat(caddyBinary); err != nil {
		t.Fatalf("the compose test runs Debian's Caddy: `make caddy` installs it (as root): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Fatal("the container tests run podman as root (published ports, CNI networks); this is not root")
	}
	podmanOnce.Do(func() { podmanRT, podmanErr = newContainers() })
	if podmanErr != nil {
		t.Fatal(podmanErr)
	}
	return podmanRT
}

// containersConf is what this machine needs of podman, in the file
// CONTAINERS_CONF names. runc: Debian's podman runs crun, which refuses
// cgroups half v1, half v2 ("cgroups in hybrid mode not supported"), as
// CI's are. Limits within the hard ones: podman asks for 1048576 open
// files (and a process limit above the machine's) by default, which a
// root without CAP_SYS_RESOURCE, in a sandbox, may not set ("setrlimit
// RLIMIT_NOFILE: operation not permitted").
const containersConf = `[containers]
default_ulimits = ["nofile=%[1]d:%[1]d", "nproc=4096:4096"]

[engine]
runtime = "runc"
`

func newContainers() (*containers, error) {
	dir, err := os.MkdirTemp("", "sluice-podman-")
	if err != nil {
		return nil, err
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil, fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	conf := filepath.Join(dir, "containers.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, containersConf, min(lim.Max, 65536)), 0o644); err != nil {
		return nil, err
	}
	c := &containers{
		env:   append(os.Environ(), "CONTAINERS_CONF="+conf),
		image: fmt.Sprintf("localhost/sluice-test:%d", os.Getpid()),
		caddy: fmt.Sprintf("localhost/sluice-test-caddy:%d", os.Getpid()),
		dir:   dir,
	}
	if _, err := c.run("make", "-C", "..", "--no-print-directory", "image", "IMAGE="+c.image, "VERSION="+imageVersion); err != nil {
		return c, err
	}
	if err := c.buildCaddy(); err != nil {
		return c, err
	}
	return c, nil
}

// caddyBinary is Debian's Caddy, which `make caddy` installs: the
// compose file's load balancer in the tests.
const caddyBinary = "/usr/bin/caddy"

// caddyContainerfile is the Caddy image: Caddy's own image runs the
// binary with this command and these directories; root/ holds the binary
// and its libraries at their paths.
const caddyContainerfile = `FROM scratch
COPY root/ /
ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data HOME=/
WORKDIR /srv
CMD ["/usr/bin/caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
`

// buildCaddy builds the image of the compose file's load balancer, since
// a test cannot count on reaching an image registry: Debian's Caddy,
// linked dynamically, with the libraries ldd names (the loader, libc,
// libzstd), FROM scratch.
func (c *containers) buildCaddy() error {
	libs, err := sharedLibraries(caddyBinary)
	if err != nil {
		return err
	}
	ctx := filepath.Join(c.dir, "caddy")
	for _, f := range append(libs, caddyBinary) {
		data, err := os.ReadFile(f) // through symbolic links: the file itself
		if err != nil {
			return fmt.Errorf("the Caddy image: %w", err)
		}
		dst := filepath.Join(ctx, "root", f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(ctx, "Containerfile"), []byte(caddyContainerfile), 0o644); err != nil {
		return err
	}
	_, err = c.run("podman", "build", "--quiet", "--layers=false", "-t", c.caddy, ctx)
	return err
}

// sharedLibraries returns the paths of the shared libraries and the
// dynamic loader that ldd names for bin.
func sharedLibraries(bin string) ([]string, error) {
	out, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w\n%s", bin, err, out)
	}
	var libs []string
	for line := range strings.Lines(string(out)) {
		// "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)", the
		// loader as "/lib64/ld-linux-x86-64.so.2 (0x...)", the kernel's
		// vDSO with no path.
		f := strings.Fields(line)
		if i := slices.Index(f, "=>"); i >= 0 {
			f = f[i+1:]
		}
		switch {
		case len(f) == 0:
		case strings.HasPrefix(f[0], "/"):
			libs = append(libs, f[0])
		case f[0] == "not":
			return nil, fmt.Errorf("ldd %s: a library is missing:\n%s", bin, out)
		}
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("ldd %s names no library:\n%s", bin, out)
	}
	return libs, nil
}

// close removes the images and the directory.
func (c *containers) close() {
	c.run("podman", "rmi", "--force", c.image, c.caddy)
	os.RemoveAll(c.dir)
}

// run runs a command with the runtime's environment and returns its
// standard output; the error says what it printed on both.
func (c *containers) run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = c.env
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s%s", name, strings.Join(args, " "), err, out.String(), errw.String())
	}
	return out.String(), nil
}

// must is run that fails t on an error, returning the output trimmed.
func (c *containers) must(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := c.run(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// logs returns what a container wrote, on both its streams.
func (c *containers) logs(name string) string {
	cmd := exec.Command("podman", "logs", name)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("podman logs %s: %v\n%s", name, err, out)
	}
	return string(out)
}

// uniqueName returns a name for containers, volumes and compose
// projects that no other test, nor another test process, uses.
func uniqueName(what string) string {
	return fmt.Sprintf("sluice-test-%s-%d-%d", what, os.Getpid(), names.Add(1))
}
