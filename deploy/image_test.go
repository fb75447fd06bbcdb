package deploy

// The container image (../Containerfile), as `make image` builds it:
// what it holds, and an edge running in it under podman.

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/internal/poll"
)

const (
	imageConfigFile = "image/edge.yaml" // the image's /etc/sluice/edge.yaml
	imageBinary     = "usr/local/bin/sluice"
	imageUser       = "65532:65532"
	// What podman and docker wait after the stop signal before SIGKILL,
	// unless told otherwise.
	defaultStopTimeout = 10 * time.Second
)

// imageInfo is what `podman image inspect` says of an image.
type imageInfo struct {
	Architecture, Os string
	Config           struct {
		User                  string
		Env, Entrypoint, Cmd  []string
		Volumes, ExposedPorts map[string]struct{}
		StopSignal            string
		Labels                map[string]string
	}
	Healthcheck struct {
		Test                           []string
		StartPeriod, Interval, Timeout time.Duration
		Retries                        int
	}
}

func inspectImage(t *testing.T, c *containers) imageInfo {
	t.Helper()
	var infos []imageInfo
	if err := json.Unmarshal([]byte(c.must(t, "podman", "image", "inspect", c.image)), &infos); err != nil || len(infos) != 1 {
		t.Fatalf("podman image inspect: %d images, %v", len(infos), err)
	}
	return infos[0]
}

// TestImageConfig checks how the image runs the edge: as the
// unprivileged user, with /data a volume, the configuration that serves
// the ports it exposes, a drain that ends before the runtimes' stop
// timeout, a health check of that port, and the labels naming its
// version and source.
func TestImageConfig(t *testing.T) {
	t.Parallel()
	c := podmanRuntime(t)
	img := inspectImage(t, c)
	cfg := img.Config
	if img.Os != "linux" || cfg.User != imageUser || !slices.Equal(cfg.Entrypoint, []string{"/" + imageBinary}) ||
		!slices.Equal(cfg.Cmd, []string{"edge"}) || cfg.StopSignal != "SIGTERM" {
		t.Fatalf("image %s: %s, user %q, entrypoint %q, cmd %q, stop signal %q", c.image, img.Os, cfg.User, cfg.Entrypoint, cfg.Cmd, cfg.StopSignal)
	}
	if _, ok := cfg.Volumes["/data"]; !ok || len(cfg.Volumes) != 1 {
		t.Fatalf("volumes %v, want /data", cfg.Volumes)
	}
	if !slices.Contains(cfg.Env, "SLUICE_CONFIG=/etc/sluice/edge.yaml") {
		t.Fatalf("env %q names no configuration file", cfg.Env)
	}
	if l := cfg.Labels; l["org.opencontainers.image.version"] != imageVersion || l["org.opencontainers.image.source"] != "https://github.com/sluicehq/sluice" {
		t.Fatalf("labels %v: want the version %s and the source", l, imageVersion)
	}

	e, err := edgecmd.LoadConfig(imageConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if e.Listen != ":8080" || e.Admin.Listen != ":9090" || e.Cluster.DataDir != "/data" {
		t.Fatalf("%s: listen %q, admin %q, data_dir %q; want every interface's 8080 and 9090, durable in /data",
			imageConfigFile, e.Listen, e.Admin.Listen, e.Cluster.DataDir)
	}
	for _, p := range []string{"8080/tcp", "9090/tcp", "6222/tcp"} {
		if _, ok := cfg.ExposedPorts[p]; !ok {
			t.Errorf("the image does not expose %s", p)
		}
	}
	if drain := drainOf(t, imageConfigFile, e.Limits); drain >= defaultStopTimeout {
		t.Fatalf("%s drains in %v, not within the runtimes' default stop timeout (%v)", imageConfigFile, drain, defaultStopTimeout)
	}
	hc := img.Healthcheck
	if !slices.Equal(hc.Test, []string{"CMD", "/" + imageBinary, "health", "--url", "http://127.0.0.1:8080"}) || hc.Interval == 0 || hc.Retries == 0 {
		t.Fatalf("health check %+v: want `sluice health` of the edge's port", hc)
	}
}

// drainOf returns how long an edge configured with l may take to exit
// after SIGTERM: drain_delay + shutdown_timeout, which the file must set.
func drainOf(t *testing.T, file string, l edgecmd.LimitsConfig) time.Duration {
	t.Helper()
	if l.DrainDelay == nil || l.ShutdownTimeout == 0 {
		t.Fatalf("%s: set limits.drain_delay and shutdown_timeout, which the stop timeout is reckoned from", file)
	}
	return time.Duration(*l.DrainDelay) + time.Duration(l.ShutdownTimeout)
}

// TestImageContents checks the image's files: the static binary, the
// configuration of this tree, the user, CA roots, /data owned by the
// user, and nothing else that runs.
func TestImageContents(t *testing.T) {
	t.Parallel()
	c := podmanRuntime(t)
	files := exportImage(t, c)
	want := map[string]string{
		"etc/sluice/edge.yaml": imageConfigFile,
		"etc/passwd":           "image/passwd",
		"etc/group":            "image/group",
	}
	for path, src := range want {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := files[path]; !ok || !bytes.Equal(f.data, data) {
			t.Errorf("the image's /%s is not %s", path, src)
		}
	}
	if f, ok := files["etc/ssl/certs/ca-certificates.crt"]; !ok || !bytes.Contains(f.data, []byte("-----BEGIN CERTIFICATE-----")) {
		t.Error("the image has no CA roots in /etc/ssl/certs/ca-certificates.crt (ACME, HTTPS hooks)")
	}
	if d, ok := files["data"]; !ok || d.hdr.Typeflag != tar.TypeDir || d.hdr.Uid != 65532 || d.hdr.Gid != 65532 {
		t.Errorf("/data: %+v; want a directory of 65532:65532, which a new volume inherits", d.hdr)
	}
	for path, f := range files {
		if f.hdr.Typeflag == tar.TypeReg && f.hdr.Mode&0o111 != 0 && path != imageBinary {
			t.Errorf("/%s is executable: the image runs the edge and nothing else", path)
		}
	}
	bin, ok := files[imageBinary]
	if !ok {
		t.Fatalf("no /%s in the image", imageBinary)
	}
	exe, err := elf.NewFile(bytes.NewReader(bin.data))
	if err != nil {
		t.Fatalf("/%s: %v", imageBinary, err)
	}
	for _, p := range exe.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("/%s is dynamically linked: FROM scratch, it needs to be static", imageBinary)
		}
	}
}

// imageFile is a file of an exported container.
type imageFile struct {
	hdr  *tar.Header
	data []byte
}

// exportImage returns the files of a container created from the image,
// by path without the leading slash.
func exportImage(t *testing.T, c *containers) map[string]imageFile {
	t.Helper()
	name := uniqueName("export")
	c.must(t, "podman", "create", "--name", name, c.image)
	t.Cleanup(func() { c.run("podman", "rm", "--force", "--volumes", name) })
	cmd := exec.Command("podman", "export", name)
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	files := map[string]imageFile{}
	tr := tar.NewReader(out)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("podman export: %v", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("podman export: %s: %v", hdr.Name, err)
		}
		files[strings.Trim(strings.TrimPrefix(hdr.Name, "./"), "/")] = imageFile{hdr, data}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("podman export: %v: %s", err, stderr.String())
	}
	return files
}

// TestImageServesAndDrains runs the image under podman with a volume and
// the client port published: it becomes ready, its health check passes,
// a client publishes and subscribes through the port, and `podman stop`
// (SIGTERM) drains it, exiting 0 before the stop timeout; started again
// on its volume, it has kept the messages, and the subscriber resumes
// with the next one, no gap.
func TestImageServesAndDrains(t *testing.T) {
	t.Parallel()
	c := podmanRuntime(t)
	name, vol := uniqueName("edge"), uniqueName("data")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the container's logs:\n%s", c.logs(name))
		}
		c.run("podman", "rm", "--force", "--volumes", name)
		c.run("podman", "volume", "rm", "--force", vol)
	})
	c.must(t, "podman", "run", "--detach", "--name", name, "--publish", "127.0.0.1::8080", "--volume", vol+":/data", c.image)
	url := waitReady(t, c, name)
	c.must(t, "podman", "healthcheck", "run", name)
	if v := c.must(t, "podman", "exec", name, "/"+imageBinary, "version"); !strings.Contains(v, imageVersion) {
		t.Fatalf("sluice version in the image: %q, want %s", v, imageVersion)
	}

	sub := dialChatter(t, url)
	sub.subscribe(t, "chat")
	pub := dialChatter(t, url)
	first, err := pub.Publish(ctxFor(t), "chat", 1)
	if err != nil {
		t.Fatal(err)
	}
	acked, next := publishAll(t, pub, "chat", 2, 9)
	acked = append([]int{1}, acked...)
	poll.UntilNil(t, "the subscriber to get the messages", func() error { return sub.awaits(acked[len(acked)-1]) })

	start := time.Now()
	c.must(t, "podman", "stop", "--time", "30", name)
	took := time.Since(start)
	if code := c.must(t, "podman", "inspect", "--format", "{{.State.ExitCode}}", name); code != "0" {
		t.Fatalf("the edge exited %s on SIGTERM, after %v; want 0", code, took)
	}
	t.Logf("podman stop: the edge drained and exited 0 in %v", took.Round(time.Millisecond))
	logs := c.logs(name)
	for _, step := range []string{"draining: /readyz answers 503", "closing open ones with 1001 going away", `"msg":"stopped"`} {
		if !strings.Contains(logs, step) {
			t.Fatalf("the edge's logs lack %q: no drain on SIGTERM?", step)
		}
	}
	poll.Until(t, "the subscriber to see its edge go", sub.wentDown)

	c.must(t, "podman", "start", name)
	if again := waitReady(t, c, name); again != url {
		t.Fatalf("the restarted container publishes its port at %s, not %s: its clients cannot come back", again, url)
	}
	if v := readAt(t, pub, "chat", first); v != int64(1) {
		t.Fatalf("after the restart, the message at %v is %v, want 1: the volume kept nothing", first, v)
	}
	more, _ := publishAll(t, pub, "chat", next, 5)
	acked = append(acked, more...)
	poll.UntilNil(t, "the subscriber to resume on the restarted edge", func() error { return sub.awaits(more[len(more)-1]) })
	sub.check(t, "the subscriber across the restart", acked)
}

// waitReady waits for the container's edge to answer /readyz with 200
// on its published port, and returns its ws:// URL.
func waitReady(t *testing.T, c *containers, name string) string {
	t.Helper()
	addr := c.must(t, "podman", "port", name, "8080/tcp")
	poll.Within(t, time.Minute, "the container's /readyz", func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return "ws://" + addr
}
