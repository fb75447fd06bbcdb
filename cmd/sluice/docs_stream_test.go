package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/internal/doctext"
)

// streamDoc is the page of the HTTP streaming endpoints.
const streamDoc = "docs/http-streaming.md"

// streamExample returns the curl command of the first sh block after
// marker in streamDoc, its continued lines joined, pointed at addr
// instead of `make run`'s edge.
func streamExample(t *testing.T, marker, addr string) string {
	t.Helper()
	block := doctext.Block(t, streamDoc, marker, "sh")
	cmd := strings.ReplaceAll(block, "\\\n", " ")
	cmd, _, _ = strings.Cut(cmd, "\n#")
	if !strings.HasPrefix(cmd, "curl ") || !strings.Contains(cmd, "http://localhost:8080/") {
		t.Fatalf("%s, after %q: %q is not a curl command to make run's edge", streamDoc, marker, cmd)
	}
	return strings.ReplaceAll(strings.TrimSpace(cmd), "http://localhost:8080/", "http://"+addr+"/")
}

// runExample runs a command as pasted into a shell and returns its output.
func runExample(t *testing.T, cmd string) string {
	t.Helper()
	out, err := exec.Command("bash", "-c", cmd).Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

// streamUntil runs a streaming command as pasted into a shell (with
// extra arguments) and returns its output once a line has want in it, or
// once it ends; then it stops the command.
func streamUntil(t *testing.T, cmd, want string, extra ...string) string {
	t.Helper()
	c := exec.Command("bash", "-c", "exec "+cmd+" "+strings.Join(extra, " "))
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	defer func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	}()
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), want) {
			break
		}
	}
	return out.String()
}

// TestDocsStreamExamples runs the curl examples of docs/http-streaming.md
// against `sluice edge` as `make run` starts it (app demo): the publish
// answers a position, and the subscribe examples, resumed from before
// it, stream that message in their format.
func TestDocsStreamExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("this test runs %s's curl examples (apt-get install curl): %v", streamDoc, err)
	}
	cfg := edgecmd.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	e := edgecmdtest.StartConfig(t, cfg, nil)

	out := runExample(t, streamExample(t, "## Publish", e.Addr))
	var ok struct{ Position string }
	if err := json.Unmarshal([]byte(out), &ok); err != nil || ok.Position == "" {
		t.Fatalf("publish answered %q, want {\"position\"}", out)
	}
	epoch, _, _ := strings.Cut(ok.Position, ":")

	nd := streamUntil(t, streamExample(t, "## Subscribe: NDJSON", e.Addr), `"user":"curl"`)
	if !strings.Contains(nd, `"message":{"text":"hi","user":"curl"}`) || !strings.HasPrefix(nd, `{"channel":"chat.lobby"`) {
		t.Errorf("the NDJSON example streamed %q, want the message published", nd)
	}
	sse := streamUntil(t, streamExample(t, "## Subscribe: Server-Sent Events", e.Addr), "data: ",
		"-H", "'Last-Event-ID: "+ok.Position+"'") // from the message on
	if !strings.Contains(sse, "\nid: "+epoch+":") && !strings.HasPrefix(sse, "id: "+epoch+":") ||
		!strings.Contains(sse, `data: {"channel":"chat.lobby","position":"`) {
		t.Errorf("the SSE example streamed %q, want the message published as an event", sse)
	}
}
