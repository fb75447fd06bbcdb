// Package loadgen is the load generator behind `sluice bench` and the
// side-by-side comparison in e2e/compare: it opens many connections to a
// pub/sub server, publishes stamped messages, and measures what the
// subscribers receive.
//
// A run follows one Scenario (fanout, channels, idle, publish). It ramps
// the subscriber connections up at a chosen rate, dials the publishers,
// publishes for a warm-up and then for the measured window, waits for the
// last messages to drain, and closes everything. The server is reached
// through a Driver: RTM drives any RTM v2 endpoint with the Sluice Go
// client; e2e/compare adds one for Centrifugo, so both systems run the
// very same scenarios.
//
// # What is measured
//
// Every message starts with a stamp (see Stamp): its publisher, a sequence
// number per publisher and channel, and its send time on the generator's
// monotonic clock. A subscriber therefore knows, per publisher, which
// message it expects next: a higher number opens a gap (messages missing,
// for now), a lower one either fills a gap (a reordered message) or is a
// duplicate. After the drain, a message never received is lost. Latency
// from publish to delivery goes into HDR histograms, sharded so that
// thousands of delivery goroutines do not contend on one lock.
//
// # Flow control
//
// "Max rate" must not mean "faster than the subscribers can read": that
// only measures how a server drops or disconnects slow consumers. Each
// publisher instead keeps at most Window messages in flight, a message
// being in flight until every subscriber of its channel received it; the
// delivered rate at that point is what the server sustains without loss.
// A fixed Rate paces the publishers and keeps the same window as a guard.
//
// # Processes
//
// A Probe samples the server's resident memory and CPU time, from /proc
// when it runs on the same host (ProcProbe, FindListener) or from its
// Prometheus /metrics (MetricsProbe); the report gives memory per
// connection and CPU time per delivered message, beside the generator's
// own CPU time, since both share the machine.
//
// Whatever CPU the generator spends is taken from the server, so it
// spends little of its own: a delivery is accounted without allocating,
// on its subscriber's own counters and one latency shard; the collector
// runs less often while a run lasts (Options.GCPercent); and SpreadDialer
// keeps the kernel from scanning the whole ephemeral port range for
// every connection of a large ramp. Most of what remains is the client's:
// reading, decoding and writing WebSocket frames.
package loadgen
