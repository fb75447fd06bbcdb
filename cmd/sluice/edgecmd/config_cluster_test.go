package edgecmd

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/store"
)

// TestStoreBytesDefault: a durable edge's store is a cache of the log,
// bounded by DurableStoreBytes unless limits.store_bytes says otherwise;
// an edge in memory keeps the store's own default.
func TestStoreBytesDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dataDir string
		nats    []string
		set     Size
		want    int64
	}{
		{name: "in memory", want: store.DefaultStoreBytes},
		{name: "durable", dataDir: t.TempDir(), want: DurableStoreBytes},
		{name: "external NATS", nats: []string{"nats://127.0.0.1:4222"}, want: DurableStoreBytes},
		{name: "durable, set", dataDir: t.TempDir(), set: 512 << 20, want: 512 << 20},
		{name: "in memory, set", set: 2 << 30, want: 2 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Cluster.DataDir, c.NATS.URLs, c.Limits.StoreBytes = tc.dataDir, tc.nats, tc.set
			opts, err := c.ServerOptions()
			if err != nil {
				t.Fatal(err)
			}
			if got := opts.StoreOptions.StoreBytes; got != tc.want {
				t.Errorf("store bytes %d, want %d", got, tc.want)
			}
		})
	}
}

// TestFeedDefault: edges that share the log are fed by interest unless
// configured otherwise; a single durable node, its stream's sole writer,
// applies everything it appends itself (all) unless configured otherwise.
func TestFeedDefault(t *testing.T) {
	for _, tc := range []struct {
		feed string
		sole bool
		want bool
	}{
		{feed: "", sole: false, want: true},
		{feed: "", sole: true, want: false},
		{feed: FeedAll, sole: false, want: false},
		{feed: FeedInterest, sole: true, want: true},
		{feed: FeedInterest, sole: false, want: true},
	} {
		cl := ClusterConfig{Feed: tc.feed}
		if got := cl.interest(tc.sole); got != tc.want {
			t.Errorf("feed %q, sole writer %v: interest %v, want %v", tc.feed, tc.sole, got, tc.want)
		}
	}
}

// TestDuplicatesDefault: a single durable node, its stream's only writer,
// keeps a short duplicates window and publish timeout (its own retries,
// and 5 s for a client's retry after "may have been stored"); edges that
// share the log keep the cluster's (the journal's publish timeout: 0
// here), and what is set is kept by both.
func TestDuplicatesDefault(t *testing.T) {
	for _, tc := range []struct {
		name          string
		edit          func(*Config)
		want, timeout time.Duration
	}{
		{"single node", func(c *Config) { c.Cluster.DataDir = "/tmp/x" }, SoleDuplicates, SolePublishTimeout},
		{"single node, window set", func(c *Config) { c.Cluster.DataDir, c.Cluster.Duplicates = "/tmp/x", Duration(time.Minute) }, time.Minute, 0},
		{"single node, timeout set", func(c *Config) { c.Cluster.DataDir, c.Cluster.PublishTimeout = "/tmp/x", Duration(7*time.Second) }, SoleDuplicates, 7 * time.Second},
		{"client listener", func(c *Config) { c.Cluster.DataDir, c.Cluster.ClientListen = "/tmp/x", "127.0.0.1:4222" }, journal.DefaultDuplicates, 0},
		{"cluster", func(c *Config) { c.Cluster.DataDir, c.Cluster.Name = "/tmp/x", "c" }, journal.DefaultDuplicates, 0},
		{"external NATS", func(c *Config) { c.NATS.URLs = []string{"nats://127.0.0.1:4222"} }, journal.DefaultDuplicates, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(c)
			sole := c.soleWriter()
			if got := c.Cluster.duplicates(sole); got != tc.want {
				t.Errorf("duplicates window %v, want %v", got, tc.want)
			}
			if got := c.Cluster.publishTimeout(sole); got != tc.timeout {
				t.Errorf("publish timeout %v, want %v", got, tc.timeout)
			}
		})
	}
}
