package main

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
)

// TestReadyFile: --ready-file says what the banner says (the URL, the
// admin listener, the appkeys) plus the process id, and is gone once the
// edge has stopped.
func TestReadyFile(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready.json")
	e := startRunEdgeReady(t, ready, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0")
	info, err := readyfile.Read(ready)
	if err != nil {
		t.Fatal(err)
	}
	if info.URL != "ws://"+info.Listen || info.Admin == "" || info.HTTP != "" || !slices.Equal(info.AppKeys, []string{"demo"}) || info.PID != os.Getpid() {
		t.Errorf("ready file %+v", info)
	}
	out := e.out.String()
	for _, line := range []string{"  url:    " + info.URL + "\n", "  admin:  http://" + info.Admin + "/metrics\n", "  appkey: demo\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("banner lacks %q:\n%s", line, out)
		}
	}
	if code, _ := httpGet(t, "http://"+info.Listen+"/healthz"); code != 200 {
		t.Errorf("/healthz on the ready file's listen address: %d", code)
	}
	if _, err := e.stop(t); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ready); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ready file after the edge stopped: %v, want none", err)
	}
}

// TestReadyFileOfAFailedStart: a ready file left by an edge that was
// killed is removed when the next one starts, even if that one then
// fails, so a script waiting for the file does not take the old one.
func TestReadyFileOfAFailedStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ready := filepath.Join(t.TempDir(), "ready.json")
	if err := readyfile.Write(ready, readyfile.Info{URL: "ws://stale"}); err != nil {
		t.Fatal(err)
	}
	var out, errw lockedBuffer
	err = runEdge(context.Background(), []string{"--listen", ln.Addr().String(), "--ready-file", ready}, stdio{in: strings.NewReader(""), out: &out, errw: &errw})
	if err == nil {
		t.Fatal("an edge on a port in use started")
	}
	if _, serr := os.Stat(ready); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("stale ready file after a failed start (%v): %v, want none", err, serr)
	}
}
