//go:build linux

package e2e

// The manual's three edges (docs/cluster.md) on one machine, pasted into a shell as a user
// does: its own commands, run by bash, with only the data directories
// moved out of the user's /tmp.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/doctext"
	"github.com/sluicehq/sluice/internal/poll"
)

// The ports docs/cluster.md's example listens on: edges 8081-8083, routes
// 6201-6203. No other test's port is one of them: the kernel hands out
// ports from its ephemeral range, journaltest.FreePorts from 10000 up.
var docsClusterPorts = []int{8081, 8082, 8083, 6201, 6202, 6203}

// TestDocsThreeEdges runs docs/cluster.md's three-edge cluster: the three
// edges form a cluster and serve, and a message published on edge 1
// reaches the subscriber on edge 2 and is read on edge 3 at the same
// position, as the page says.
func TestDocsThreeEdges(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("docs/cluster.md's example waits with curl (apt-get install curl): %v", err)
	}
	for _, p := range docsClusterPorts {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("docs/cluster.md's example listens on 127.0.0.1:%d, which is taken: %v", p, err)
		}
		ln.Close()
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sluiceBinary(t), filepath.Join(dir, "bin", "sluice")); err != nil {
		t.Fatal(err)
	}
	block := doctext.Block(t, "docs/cluster.md", "**Three edges on one machine**", "sh")
	script := strings.ReplaceAll(block, "/tmp/sluice-", filepath.Join(dir, "data")+"-")
	if script == block {
		t.Fatal("docs/cluster.md's example no longer keeps its data in /tmp/sluice-N: update this test")
	}
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	// The edges form their cluster in seconds; an edge that fails leaves
	// the example's readiness loop waiting, until this.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1") // curl reaches the edges itself
	// A file, not a buffer: the edges and sub the script leaves running
	// keep its output open, and Wait returns when bash does.
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopGroup(t, cmd.Process.Pid) })
	output := func() string {
		b, _ := os.ReadFile(out.Name())
		return string(b)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("docs/cluster.md's example failed: %v\n%s", err, output())
	}

	// pub prints the position; read (edge 3) and sub (edge 2, in the
	// background, so before or after read) print the message with it.
	var pubPos string
	var records []record
	poll.UntilNil(t, "the subscriber on edge 2 prints the message", func() error {
		pubPos, records = "", nil
		for _, line := range strings.Split(output(), "\n") {
			line = strings.TrimSpace(line)
			var r record
			switch {
			case strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &r) == nil && r.Position != "":
				records = append(records, r)
			case pubPos == "" && isPosition(line):
				pubPos = line
			}
		}
		if len(records) < 2 {
			return fmt.Errorf("%d messages printed; the example's output:\n%s", len(records), output())
		}
		return nil
	})
	if pubPos == "" {
		t.Fatalf("pub printed no position:\n%s", output())
	}
	for _, r := range records {
		if r.Position != pubPos || r.Message["text"] != "hi from edge 1" {
			t.Errorf("read or sub printed %+v; want the message pub stored at %s\n%s", r, pubPos, output())
		}
	}
	if len(records) != 2 {
		t.Errorf("read and sub printed %d messages, want one each:\n%s", len(records), output())
	}
}

// record is a line of sub's or read's output.
type record struct {
	Position string         `json:"position"`
	Message  map[string]any `json:"message"`
}

// isPosition reports whether s is an EPOCH:OFFSET, as pub prints.
func isPosition(s string) bool {
	epoch, offset, ok := strings.Cut(s, ":")
	return ok && epoch != "" && offset != "" && strings.Trim(epoch+offset, "0123456789") == ""
}

// stopGroup ends the process group pgid (the script's edges and
// subscriber) and waits until it is gone, so that the data directories
// can be removed.
func stopGroup(t *testing.T, pgid int) {
	t.Helper()
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill the page's example's processes: %v", err)
		return
	}
	poll.Until(t, "the page's example's processes exit", func() bool { return !groupAlive(pgid) })
}

// groupAlive reports whether a process of group pgid runs. A killed edge
// is a zombie until whoever adopted it (the script's bash is gone) reaps
// it, which is not this test's to wait for: /proc tells the two apart.
func groupAlive(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone since the glob
		}
		// pid (comm) state ppid pgrp ...: comm may hold anything, up to
		// the last ')'.
		i := strings.LastIndexByte(string(b), ')')
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" && fields[0] != "X" {
			return true
		}
	}
	return false
}
