package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/internal/doctext"
	"github.com/sluicehq/sluice/internal/poll"
)

// hooksPage is the manual's page on hooks: its first yaml block
// configures them, and its Node backend answers them.
const hooksPage = "docs/hooks.md"

// TestDocsNodeBackend runs the hooks page's Node backend with node
// against a real edge configured with the page's hooks example, and
// checks what the page says it does.
func TestDocsNodeBackend(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("this test runs docs/hooks.md's Node backend with node (`make test` installs it with npm when run as root; or apt-get install nodejs): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "backend.js"), []byte(doctext.Block(t, hooksPage, "A backend in Node", "js")), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // for node to listen on
	const secret = "hook-secret-change-me-0123456789"
	cmd := exec.Command("node", "backend.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLUICE_HOOK_SECRET="+secret, "PORT="+strconv.Itoa(port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(out); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	backend := "127.0.0.1:" + strconv.Itoa(port)
	poll.UntilNil(t, "node backend.js to listen on "+backend, func() error {
		c, err := net.Dial("tcp", backend)
		if err == nil {
			c.Close()
		}
		return err
	})

	yaml := strings.ReplaceAll(doctext.Block(t, hooksPage, "# Hooks into the app (for backends)\n", "yaml"), "127.0.0.1:3000", backend)
	url := edgecmdtest.Start(t, yaml).URL + "/v2?appkey=chat&token="
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, resp, err := websocket.Dial(ctx, url+"forged", nil); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a forged token: %v %v, want 403", resp, err)
	}
	ws, _, err := websocket.Dial(ctx, url+"token-of-alice", nil)
	if err != nil {
		t.Fatalf("alice: %v", err)
	}
	defer ws.CloseNow()
	request := func(frame string) map[string]any {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := request(`{"action":"rtm/subscribe","id":1,"body":{"channel":"private.bob"}}`); p["action"] != "rtm/subscribe/error" {
		t.Fatalf("alice subscribing to private.bob: %v", p)
	}
	if p := request(`{"action":"rtm/subscribe","id":2,"body":{"channel":"private.alice"}}`); p["action"] != "rtm/subscribe/ok" {
		t.Fatalf("alice subscribing to private.alice: %v", p)
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"action":"rtm/publish","body":{"channel":"private.alice","message":"hi"}}`)); err != nil {
		t.Fatal(err)
	}
	_, data, err := ws.Read(ctx)
	if err != nil || !strings.Contains(string(data), `"messages":[{"from":"alice","said":"hi"}]`) {
		t.Fatalf("alice's hi arrived as %s (%v)", data, err)
	}
	if err := ws.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		t.Fatal(err)
	}
	// The events, in the order the edge queued them: occupied and alice's
	// join as she subscribed; her leave and the vacating as she closed (in
	// either order); her disconnect last.
	var got []string
	for len(got) < 5 {
		select {
		case line := <-lines:
			got = append(got, line)
		case <-ctx.Done():
			t.Fatalf("backend printed %d of 5 events: %q", len(got), got)
		}
	}
	t.Logf("the backend printed:\n%s", strings.Join(got, "\n"))
	has := func(line string, want ...string) bool {
		for _, w := range want {
			if !strings.Contains(line, w) {
				return false
			}
		}
		return true
	}
	vacated, left := ` channel_vacated {"channel":"private.alice"}`, ` presence_leave {"channel":"private.alice"`
	if !has(got[0], ` channel_occupied {"channel":"private.alice"}`) ||
		!has(got[1], ` presence_join {"channel":"private.alice"`, `"user":"alice"`) ||
		!(has(got[2], vacated) && has(got[3], left) || has(got[2], left) && has(got[3], vacated)) ||
		!has(got[4], ` disconnect {"connection":`, `"user":"alice","code":1000}`) {
		t.Fatalf("backend printed %q, want occupied, join, vacated and leave, disconnect", got)
	}
}
