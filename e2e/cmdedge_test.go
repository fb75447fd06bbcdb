package e2e

// `sluice edge` in this process (package edgecmd, through edgecmdtest):
// the whole edge the binary runs, from a configuration file's YAML, on a
// loopback port, stopped when the test ends. The tests that need the
// process itself (signals, exit codes, SIGKILL, restarts, the binary's
// output) run it as one instead (cli_test.go).

import (
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
)

// cmdEdge is an edge started by startCmdEdge.
type cmdEdge struct {
	*edgecmdtest.Edge
	url, appkey string // the RTM endpoint, ws://127.0.0.1:PORT, and the first appkey
}

// startCmdEdge starts `sluice edge` configured by yaml (listen
// 127.0.0.1:0 unless it sets one; "" is the default edge, app "demo", as
// `make run` starts it) and returns once it serves.
func startCmdEdge(t *testing.T, yaml string) *cmdEdge {
	t.Helper()
	e := edgecmdtest.Start(t, yaml)
	return &cmdEdge{Edge: e, url: e.URL, appkey: e.AppKey}
}

// env points the client commands at the edge.
func (e *cmdEdge) env() []string {
	return []string{"SLUICE_URL=" + e.url, "SLUICE_APPKEY=" + e.appkey}
}
