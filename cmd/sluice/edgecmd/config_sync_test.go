package edgecmd

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestClusterSync: cluster.sync takes always or a positive interval,
// refuses anything else naming the key and its line, reaches the
// embedded node's options (defaultSync when unset) and survives a
// round trip through YAML.
func TestClusterSync(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  SyncPolicy // the node's, defaultSync for ""
	}{
		{"", defaultSync},
		{"always", SyncPolicy{Always: true}},
		{"1s", SyncPolicy{Interval: time.Second}},
		{`"2m"`, SyncPolicy{Interval: 2 * time.Minute}},
	} {
		t.Run("sync="+tc.value, func(t *testing.T) {
			t.Parallel()
			text := "cluster:\n  data_dir: data\n"
			if tc.value != "" {
				text += "  sync: " + tc.value + "\n"
			}
			path, _ := writeConfig(t, text)
			c, err := LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			no, err := c.Cluster.nodeOptions(slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if got := (SyncPolicy{Always: no.SyncAlways, Interval: no.SyncInterval}); got != tc.want {
				t.Fatalf("node options sync %+v, want %+v", got, tc.want)
			}
			out, err := yaml.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			back, err := parseConfig(out)
			if err != nil || back.Cluster.Sync != c.Cluster.Sync {
				t.Fatalf("round trip of %q: %+v, %v\n%s", tc.value, back.Cluster.Sync, err, out)
			}
			if tc.value == "" && strings.Contains(string(out), "sync:") {
				t.Errorf("an unset cluster.sync written out:\n%s", out)
			}
		})
	}
}

// TestClusterSyncRefused: what cluster.sync refuses, and cluster.sync
// with an external NATS, whose servers' own setting applies.
func TestClusterSyncRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []badConfig{
		{name: "zero", text: "cluster:\n  data_dir: d\n  sync: 0s\n", want: []string{"cluster.sync (line 3)", `"0s" is neither always nor a positive interval`}},
		{name: "negative", text: "cluster:\n  data_dir: d\n  sync: -1s\n", want: []string{"cluster.sync (line 3)", "positive interval"}},
		{name: "word", text: "cluster:\n  data_dir: d\n  sync: never\n", want: []string{"cluster.sync (line 3)", `"never"`}},
		{name: "number", text: "cluster:\n  data_dir: d\n  sync: 5\n", want: []string{"cluster.sync (line 3)", `"5"`}},
		{name: "list", text: "cluster:\n  data_dir: d\n  sync: [always]\n", want: []string{"cluster.sync (line 3)", "want always or an interval"}},
		{name: "external NATS", text: "nats: {urls: [nats://127.0.0.1:4222]}\ncluster: {sync: always}\n", want: []string{"cluster.sync: always is the embedded node's", "sync_interval"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loadRefused(t, tt)
		})
	}
	for _, p := range []SyncPolicy{{Always: true, Interval: time.Second}, {Interval: -time.Second}} {
		c := DefaultConfig()
		c.Cluster.DataDir, c.Cluster.Sync = "/tmp/x", p
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "cluster.sync:") {
			t.Errorf("Validate with sync %+v = %v, want a cluster.sync error", p, err)
		}
	}
}

// TestExternalSyncWarning: an edge on an external NATS is told that its
// acknowledgments are as durable as the NATS servers' sync_interval; an
// embedded one, which sets its node's, is not.
func TestExternalSyncWarning(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.NATS.URLs = []string{"nats://127.0.0.1:4222"}
	if got := strings.Join(c.Warnings(), "\n"); !strings.Contains(got, "nats.urls: an acknowledged publish is as durable as the NATS servers' JetStream sync_interval") {
		t.Errorf("warnings on an external NATS: %q", got)
	}
	c = DefaultConfig()
	c.Cluster.DataDir = "/tmp/x"
	if got := strings.Join(c.Warnings(), "\n"); strings.Contains(got, "sync") {
		t.Errorf("warnings on an embedded node: %q", got)
	}
}
