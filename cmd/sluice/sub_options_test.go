package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// Tests of sluice sub with Satori's subscribe options.

// TestSubOnlyChanges: sluice sub --only-changes prints a message only when
// it differs from the one before it.
func TestSubOnlyChanges(t *testing.T) {
	url := startTestEdge(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var out syncBuffer
	var errw bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- runSub(ctx, []string{"--url", url, "--history-count", "10", "--only-changes", "temp"}, stdio{out: &out, errw: &errw})
	}()
	var pos []string
	for _, v := range []string{"20", "20", "21", "21", "20"} {
		pos = append(pos, strings.TrimSpace(cmdOut(t, runPub, "", "--url", url, "temp", v)))
	}
	lines := waitLines(t, &out, 3)
	for i, want := range []string{`{"position":"` + pos[0] + `","message":20}`, `{"position":"` + pos[2] + `","message":21}`,
		`{"position":"` + pos[4] + `","message":20}`} {
		if lines[i] != want {
			t.Errorf("line %d = %s, want %s", i, lines[i], want)
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("sub: %v (stderr %q)", err, errw.String())
	}
	if n := len(waitLines(t, &out, 3)); n != 3 {
		t.Errorf("%d lines, want 3", n)
	}
}

// TestSubPrefix: sluice sub --prefix prints the messages of every channel
// under the prefix, each line naming its channel and its position there.
func TestSubPrefix(t *testing.T) {
	url := startTestEdge(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var out syncBuffer
	var errw bytes.Buffer
	done := make(chan error, 1)
	a := strings.TrimSpace(cmdOut(t, runPub, "", "--url", url, "room.a", `"before"`))
	go func() {
		done <- runSub(ctx, []string{"--url", url, "--history-count", "1", "--prefix", "room."}, stdio{out: &out, errw: &errw})
	}()
	first := waitLines(t, &out, 1)
	if want := `{"channel":"room.a","position":"` + a + `","message":"before"}`; first[0] != want {
		t.Fatalf("history line = %s, want %s", first[0], want)
	}
	b := strings.TrimSpace(cmdOut(t, runPub, "", "--url", url, "room.b", `{"n":1}`))
	cmdOut(t, runPub, "", "--url", url, "elsewhere", `"no"`)
	c := strings.TrimSpace(cmdOut(t, runPub, "", "--url", url, "room.a", `"after"`))
	// Channels are delivered each in order, not in order among them.
	lines := waitLines(t, &out, 3)
	got := slices.Sorted(slices.Values(lines[1:3]))
	want := []string{`{"channel":"room.a","position":"` + c + `","message":"after"}`,
		`{"channel":"room.b","position":"` + b + `","message":{"n":1}}`}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("sub: %v (stderr %q)", err, errw.String())
	}
	var o, e bytes.Buffer
	if code := run([]string{"sub", "--url", url, "--prefix", "--position", a, "room."}, stdio{in: strings.NewReader(""), out: &o, errw: &e}); code != 2 {
		t.Errorf("--prefix with --position: exit %d, %q", code, e.String())
	}
}
