package sysstats_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/sysstats"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMessageRates(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	prev := sysstats.Sample{Time: t0, Store: store.Stats{Channels: 1}}
	prev.Server.MessagesIn[0], prev.Server.MessagesOut[2] = 10, 100
	cur := sysstats.Sample{Edge: "e1", Time: t0.Add(2 * time.Second), Store: store.Stats{Channels: 3, Bytes: 4096, Blocks: 2}}
	cur.Server.Connections, cur.Server.Subscriptions, cur.Server.ConnectionsTotal = 4, 5, 9
	cur.Server.MessagesIn[0], cur.Server.MessagesIn[1] = 20, 10   // +20 over 2 s
	cur.Server.MessagesOut[2], cur.Server.MessagesOut[0] = 140, 2 // +42 over 2 s
	cur.Server.BytesIn[1] = 1000

	m := sysstats.Message(prev, cur)
	want := map[string]any{
		"edge":                 "e1",
		"time":                 int64(1002000),
		"interval_ms":          int64(2000),
		"connections":          int64(4),
		"connections_total":    int64(9),
		"subscriptions":        int64(5),
		"channels":             int64(3),
		"store_bytes":          int64(4096),
		"blocks":               int64(2),
		"messages_in":          int64(30),
		"messages_out":         int64(142),
		"messages_in_per_sec":  10.0,
		"messages_out_per_sec": 21.0,
		"bytes_in_per_sec":     500.0,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
	byCodec := m["messages_out_per_sec_by_codec"].(map[string]any)
	for i, name := range server.Codecs() {
		w := []float64{1, 0, 20}[i]
		if byCodec[name] != w {
			t.Errorf("%s out/s = %v, want %v", name, byCodec[name], w)
		}
	}
	// The first sample of a run has no interval: rates are 0.
	if r := sysstats.Message(cur, cur)["messages_in_per_sec"]; r != 0.0 {
		t.Errorf("rate over no interval = %v", r)
	}
}

// TestPublishes runs a publisher against a real edge and reads $sys.stats
// as a client would.
func TestPublishes(t *testing.T) {
	t.Parallel()
	a := app.Demo()
	e := servertest.Start(t, &server.Options{Apps: []*app.App{a}}, nil)
	srv := e.Server
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, e.URL, &client.Options{AppKey: app.DemoKey})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var mu sync.Mutex
	var samples []map[string]any
	if _, err := c.Subscribe(ctx, sysstats.Channel, nil, func(m client.Message) {
		mu.Lock()
		samples = append(samples, m.Value.(map[string]any))
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := c.Publish(ctx, "chat", int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	p := sysstats.Start(ctx, srv, &sysstats.Options{Interval: 10 * time.Millisecond, Edge: "edge-7"})
	defer p.Stop()
	// A sample that counts the five messages and this client, from the
	// edge named.
	poll.UntilNil(t, "a sample with 5 messages in and 1 connection", func() error {
		mu.Lock()
		var last map[string]any
		if len(samples) > 0 {
			last = samples[len(samples)-1]
		}
		mu.Unlock()
		if last != nil && last["messages_in"] == int64(5) && last["connections"] == int64(1) && last["channels"].(int64) >= 2 && last["edge"] == "edge-7" {
			return nil
		}
		return fmt.Errorf("last sample %v", last)
	})
	p.Stop()
	p.Stop() // idempotent
}

// TestStopsWithContext checks that the publisher's goroutine ends with its
// context (goleak checks it is gone).
func TestStopsWithContext(t *testing.T) {
	t.Parallel()
	srv, err := server.New(&server.Options{Apps: []*app.App{app.Demo()}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	p := sysstats.Start(ctx, srv, nil)
	cancel()
	p.Stop()
	// The first sample was published at once, before the context ended.
	if n := srv.Store().Stats().Appends; n != 1 {
		t.Fatalf("%d messages stored, want the first sample", n)
	}
}
