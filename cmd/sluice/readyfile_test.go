package main

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
	"github.com/sluicehq/sluice/internal/poll"
)

// TestReadyFile: `sluice edge --ready-file F` (runEdge, in this process,
// stopped as on SIGINT) writes what the banner says (the URL, the admin
// listener, the appkeys) plus the process id, and removes it once the
// edge has stopped: the flags reach package edgecmd.
func TestReadyFile(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready.json")
	var out, logs edgecmdtest.Output
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runEdge(ctx, []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--ready-file", ready},
			stdio{in: strings.NewReader(""), out: &out, errw: &logs})
	}()
	var info readyfile.Info
	poll.UntilNil(t, "the edge's ready file", func() error {
		select {
		case err := <-done:
			t.Fatalf("edge exited before it was ready: %v\n%s", err, logs.String())
		default:
		}
		var err error
		info, err = readyfile.Read(ready)
		return err
	})
	if info.URL != "ws://"+info.Listen || info.Admin == "" || info.HTTP != "" || !slices.Equal(info.AppKeys, []string{"demo"}) || info.PID != os.Getpid() {
		t.Errorf("ready file %+v", info)
	}
	for _, line := range []string{"Sluice edge " + Version() + " serving RTM v2\n", "  url:    " + info.URL + "\n", "  admin:  http://" + info.Admin + "/admin/ (the admin page; metrics at /metrics)\n", "  appkey: demo\n"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("banner lacks %q:\n%s", line, out.String())
		}
	}
	resp, err := http.Get("http://" + info.Listen + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz on the ready file's listen address: %d", resp.StatusCode)
	}
	cancel()
	if err := poll.Recv(t, "runEdge to return", done); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ready); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ready file after the edge stopped: %v, want none", err)
	}
}
