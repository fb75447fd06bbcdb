package main

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
	"github.com/sluicehq/sluice/wasm/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFloorServesTheLoadGenerator drives the floor with the load
// generator's RTM clients over real sockets, in each codec and both
// scenarios it serves in e2e/compare: every message reaches every
// subscriber once and in order, and the floor stops with its
// connections.
func TestFloorServesTheLoadGenerator(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	for _, tc := range []struct {
		name  string
		codec string
		cfg   loadgen.Config
	}{
		{"fanout json", "json", loadgen.Config{Scenario: loadgen.Fanout, Publishers: 1, Subscribers: 8, Rate: 200, Inflight: 1}},
		{"channels msgpack", "msgpack", loadgen.Config{Scenario: loadgen.Channels, Publishers: 2, Channels: 10, Subscribers: 20, Inflight: 1}},
		{"channels cbor", "cbor", loadgen.Config{Scenario: loadgen.Channels, Publishers: 1, Channels: 4, Subscribers: 4, Inflight: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Duration, tc.cfg.Warmup, tc.cfg.Drain = 500*time.Millisecond, 100*time.Millisecond, 300*time.Millisecond
			d := &loadgen.RTM{Label: "floor", URL: "ws://" + ln.Addr().String(), Options: client.Options{AppKey: "demo", Codec: tc.codec}}
			res, err := loadgen.Run(ctx, d, tc.cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Delivered == 0 || res.Lost != 0 || res.Duplicates != 0 || res.Reordered != 0 {
				t.Fatalf("delivered %d, lost %d, duplicated %d, reordered %d; want some, and none lost, duplicated or reordered",
					res.Delivered, res.Lost, res.Duplicates, res.Reordered)
			}
		})
	}
}
