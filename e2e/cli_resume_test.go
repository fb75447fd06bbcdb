package e2e

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// subLine is one line `sluice sub` prints.
type subLine struct {
	Position string `json:"position"`
	Message  struct {
		N int `json:"n"`
	} `json:"message"`
}

// parseSubLines parses every line of out, failing on a torn (unterminated
// or unparsable) one.
func parseSubLines(t *testing.T, out string) []subLine {
	t.Helper()
	if out != "" && !strings.HasSuffix(out, "\n") {
		t.Fatalf("sub's output ends with a torn line: %q", out[max(0, len(out)-80):])
	}
	var lines []subLine
	for l := range strings.Lines(out) {
		var s subLine
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("sub printed a line that does not parse: %q: %v", l, err)
		}
		lines = append(lines, s)
	}
	return lines
}

// TestCLISubKilledResumesExactly publishes 20,000 messages, runs `sluice
// sub` over their history and kills it (SIGKILL) while it prints: every
// line printed is whole, and `sluice sub --after` with the last line's
// position prints the rest: together, every message once, in order.
// Before, lines carried their batch's end, and the resume skipped the rest
// of the batch the kill fell in.
func TestCLISubKilledResumesExactly(t *testing.T) {
	t.Parallel()
	// Enough messages that the kill falls while sub prints, published
	// faster than the default 1,000 requests a second.
	edge := startCmdEdge(t, "limits:\n  requests_per_second: 1000000\n")
	const n = 20_000
	// Messages of 200 bytes: a batch is then larger than a write buffer
	// of a few KiB, which a sub that buffered its output would write out
	// mid-batch, mid-line.
	var in strings.Builder
	pad := strings.Repeat("x", 200)
	for i := 1; i <= n; i++ {
		in.WriteString(`{"n":` + strconv.Itoa(i) + `,"pad":"` + pad + `"}` + "\n")
	}
	pub := exec.Command(sluiceBinary(t), "pub", "--codec", "json", "resume", "-")
	pub.Env, pub.Stdin = append(pub.Environ(), edge.env()...), strings.NewReader(in.String())
	if out, err := pub.CombinedOutput(); err != nil {
		t.Fatalf("pub: %v: %s", err, out)
	}

	first := startProcess(t, edge.env(), "sub", "resume", "--history-count", strconv.Itoa(n))
	poll.Until(t, "sub to print 100 lines", func() bool { return strings.Count(first.stdout.String(), "\n") >= 100 })
	first.kill()
	lines := parseSubLines(t, first.stdout.String())
	last := lines[len(lines)-1].Position
	if _, err := rtm.ParsePosition(last); err != nil {
		t.Fatalf("last line's position %q: %v", last, err)
	}

	var second *process
	if len(lines) < n {
		second = startProcess(t, edge.env(), "sub", "resume", "--after", last)
		poll.Until(t, "the resumed sub to print the rest", func() bool {
			return strings.Count(second.stdout.String(), "\n") >= n-len(lines)
		})
		second.kill()
		lines = append(lines, parseSubLines(t, second.stdout.String())...)
	}
	t.Logf("killed after %d lines", len(lines)-len(parseSubLines(t, outOf(second))))
	if len(lines) != n {
		t.Fatalf("%d messages over both runs, want %d", len(lines), n)
	}
	for i, l := range lines {
		if l.Message.N != i+1 {
			t.Fatalf("message %d is %d: lost or repeated across the kill", i+1, l.Message.N)
		}
	}
}

// outOf returns what p printed, "" for no process.
func outOf(p *process) string {
	if p == nil {
		return ""
	}
	return p.stdout.String()
}

// TestCLISubAcrossEdgeRestart restarts the edge (killed, started again:
// a new epoch, no history) under two `sluice sub` behind a proxy. The
// default one warns on stderr that messages may be missing and prints
// what is published on the new edge; the --strict one exits with
// expired_position.
func TestCLISubAcrossEdgeRestart(t *testing.T) {
	t.Parallel()
	a := startEdgeProcess(t)
	px := newProxy(t, strings.TrimPrefix(a.url, "ws://"))
	env := []string{"SLUICE_URL=" + px.url(), "SLUICE_APPKEY=" + a.appkey}
	sub := startProcess(t, env, "sub", "restart")
	strict := startProcess(t, env, "sub", "--strict", "restart")
	onA := dial(t, a.url, client.Options{AppKey: a.appkey})
	// The subs say nothing once subscribed: publish until both print.
	poll.Until(t, "both subs to print a message from the first edge", func() bool {
		if _, err := onA.Publish(ctxFor(t), "restart", map[string]any{"n": 1}); err != nil {
			t.Fatal(err)
		}
		return strings.Contains(sub.stdout.String(), "\n") && strings.Contains(strict.stdout.String(), "\n")
	})

	a.kill()
	b := startEdgeProcess(t)
	px.retarget(strings.TrimPrefix(b.url, "ws://"))
	px.cut()
	if code := strict.exitCode(t, 20*time.Second); code != 1 || !strings.Contains(strict.stderr.String(), "expired_position") {
		t.Errorf("sub --strict exited %d (%q), want 1 with expired_position", code, strict.stderr.String())
	}
	poll.Until(t, "the warning of the default sub", func() bool {
		return strings.Contains(sub.stderr.String(), "warning: messages may be missing")
	})
	before := len(parseSubLines(t, sub.stdout.String()))
	onB := dial(t, b.url, client.Options{AppKey: b.appkey})
	if _, err := onB.Publish(ctxFor(t), "restart", map[string]any{"n": 2}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the default sub to print the message from the new edge", func() bool {
		return len(parseSubLines(t, sub.stdout.String())) > before
	})
	lines := parseSubLines(t, sub.stdout.String())
	if l := lines[len(lines)-1]; l.Message.N != 2 {
		t.Errorf("last line %+v, want message 2", l)
	}
	select {
	case <-sub.done:
		t.Fatalf("the default sub exited: %v\n%s", sub.err, sub.stderr.String())
	default:
	}
}
