package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/internal/doctext"
)

// TestDocsAPIExamples runs each curl line of the server API page's
// block (docs/server-api.md), as pasted into a shell, against `sluice
// edge` as `make run` starts it: the embedded default configuration, whose
// demo app has the development API key the block's KEY is. Each answers
// JSON that is no error, with the keys of the answer the page shows after
// it (where it shows one on a line).
func TestDocsAPIExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("this test runs docs/server-api.md's curl examples (apt-get install curl): %v", err)
	}
	cfg := edgecmd.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	e := edgecmdtest.StartConfig(t, cfg, nil)
	lines := strings.Split(doctext.Block(t, "docs/server-api.md", "# Server API (for backends)\n", "sh"), "\n")
	var env []string
	ran := 0
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "KEY="):
			if key := strings.Fields(line)[0]; key != "KEY="+edgecmd.DemoAPIKey {
				t.Fatalf("docs/server-api.md sets %s, not the development key `make run` prints (%s)", key, edgecmd.DemoAPIKey)
			}
			env = append(env, strings.Fields(line)[0])
			continue
		case strings.HasPrefix(line, "EDGE="):
			env = append(env, "EDGE=http://"+e.Addr)
			continue
		case !strings.HasPrefix(line, "curl "):
			continue
		}
		ran++
		cmd := exec.Command("bash", "-c", line)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: answered %q, not a JSON object", line, out)
		}
		if _, failed := got["error"]; failed {
			t.Errorf("%s: answered %s", line, out)
			continue
		}
		// The answer the page shows, when it fits on the next line.
		var want map[string]any
		if i+1 < len(lines) && json.Unmarshal([]byte(strings.TrimPrefix(lines[i+1], "# ")), &want) == nil {
			for k := range want {
				if _, ok := got[k]; !ok {
					t.Errorf("%s: answered %s, without %q (the page shows %s)", line, out, k, lines[i+1])
				}
			}
		}
	}
	if ran < 10 {
		t.Fatalf("ran %d curl lines of docs/server-api.md's block, want every method's", ran)
	}
}
