package main

import (
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/app"
)

// TestReadmeConfigReference loads the configuration reference of the
// README, so the documented keys and defaults cannot drift from the code.
func TestReadmeConfigReference(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Configuration\n")
	if !ok {
		t.Fatal("README has no Configuration section")
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("the Configuration section has no yaml block")
	}
	cfg, err := parseConfig([]byte(block))
	if err != nil {
		t.Fatalf("README config: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("README config: %v", err)
	}
	opts, err := cfg.ServerOptions()
	if err != nil {
		t.Fatalf("README config: %v", err)
	}
	if len(opts.Apps) != 1 || opts.Apps[0].Key != "demo" || opts.Apps[0].JWT == nil {
		t.Fatalf("README config built apps %+v", opts.Apps)
	}
	if got := opts.Apps[0].ChannelLimit(); got != app.DefaultMaxChannels {
		t.Fatalf("README config: max_channels %d, want the default %d", got, app.DefaultMaxChannels)
	}
	if _, ok := opts.Apps[0].Role("admin"); !ok {
		t.Fatal("README config lost the admin role")
	}
}
