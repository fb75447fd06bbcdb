package sysstats

import (
	"time"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/store"
)

// Sample is the edge's counters at one time.
type Sample struct {
	// Edge names the edge (Options.Edge).
	Edge   string
	Time   time.Time
	Server server.Stats
	Store  store.Stats
}

// sum adds up a per-codec counter.
func sum(per []uint64) uint64 {
	var n uint64
	for _, v := range per {
		n += v
	}
	return n
}

// count is a counter in the canonical value model, where integers are
// int64 (a counter does not reach 2^63).
func count(n uint64) int64 { return int64(min(n, 1<<63-1)) }

// Message is the $sys.stats message for the interval from prev to cur:
// gauges as of cur, totals since the edge started, and rates per second
// over the interval (0 for the first sample, where prev is cur).
//
//	{"edge", "time": unix ms, "interval_ms",
//	 "connections", "connections_total", "subscriptions",
//	 "channels", "store_bytes", "blocks",
//	 "messages_in", "messages_out", "bytes_in", "bytes_out" (totals),
//	 "messages_in_per_sec", "messages_out_per_sec",
//	 "bytes_in_per_sec", "bytes_out_per_sec",
//	 "messages_out_per_sec_by_codec": {"json", "cbor", "msgpack"},
//	 "out_of_sync", "fast_forward", "slow_closes", "auth_failures",
//	 "expired_blocks", "evicted_blocks" (totals)}
func Message(prev, cur Sample) map[string]any {
	s, st := cur.Server, cur.Store
	elapsed := cur.Time.Sub(prev.Time).Seconds()
	rate := func(now, before uint64) float64 {
		if elapsed <= 0 || now < before {
			return 0
		}
		return float64(now-before) / elapsed
	}
	in, out := sum(s.MessagesIn[:]), sum(s.MessagesOut[:])
	bin, bout := sum(s.BytesIn[:]), sum(s.BytesOut[:])
	byCodec := map[string]any{}
	for i, name := range server.Codecs() {
		byCodec[name] = rate(s.MessagesOut[i], prev.Server.MessagesOut[i])
	}
	return map[string]any{
		"edge":                          cur.Edge,
		"time":                          cur.Time.UnixMilli(),
		"interval_ms":                   cur.Time.Sub(prev.Time).Milliseconds(),
		"connections":                   s.Connections,
		"connections_total":             count(s.ConnectionsTotal),
		"subscriptions":                 s.Subscriptions,
		"channels":                      st.Channels,
		"store_bytes":                   st.Bytes,
		"blocks":                        st.Blocks,
		"messages_in":                   count(in),
		"messages_out":                  count(out),
		"bytes_in":                      count(bin),
		"bytes_out":                     count(bout),
		"messages_in_per_sec":           rate(in, sum(prev.Server.MessagesIn[:])),
		"messages_out_per_sec":          rate(out, sum(prev.Server.MessagesOut[:])),
		"bytes_in_per_sec":              rate(bin, sum(prev.Server.BytesIn[:])),
		"bytes_out_per_sec":             rate(bout, sum(prev.Server.BytesOut[:])),
		"messages_out_per_sec_by_codec": byCodec,
		"out_of_sync":                   count(s.OutOfSync),
		"fast_forward":                  count(s.FastForward),
		"slow_closes":                   count(s.SlowCloses),
		"auth_failures":                 count(s.AuthFailures),
		"expired_blocks":                count(st.ExpiredBlocks),
		"evicted_blocks":                count(st.EvictedBlocks),
	}
}
