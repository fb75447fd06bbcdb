// Package journal keeps an edge's channels in NATS JetStream, the log of
// record of a durable edge and of a cluster of edges.
//
// One stream (default SLUICE) holds the messages of every app and
// channel, under the subject sluice.<app>.<channel>, both tokens in
// unpadded base64url so that any channel name (dots, stars, spaces) is
// one subject token. The stream's sequence numbers are the OFFSETs of
// positions and its creation time, in microseconds, their EPOCH: a
// position means the same message on every edge, and one from a deleted
// and re-created stream is expired, not misread.
//
// A publish is acknowledged once JetStream has stored it (on a quorum of
// an R3 stream) and this edge's store has it too, so that a read on the
// same edge sees it, at that sequence of this stream's incarnation
// (verify.go: a stream deleted and created again numbers from 1 again). The edge retries a publish JetStream did not answer,
// with the same Nats-Msg-Id, so that a retry across a leader change is
// stored once.
//
// Every edge keeps its own store (edge/store) as a replica of the
// stream's hot tail: one ordered consumer per edge feeds it, in stream
// order, and the edge's subscribers are served from it. A sole writer
// (Options.SoleWriter, sole.go) appends its own acknowledged publishes
// instead, and falls back to the consumer on anything unexpected. What the replica
// no longer (or not yet) holds is read from the stream by direct get.
//
// Retention: the stream keeps messages for MaxAge, which the edge sets to
// the longest that any app's rule keeps a message (TTL plus grace, or the
// history age); the edge applies each channel's own rule when it reads.
//
// What needs the channel's newest message in one step with the append
// (RTM's compare-and-set, the previous message, a dead man's switch) is
// a conditional publish that JetStream checks on the stream's leader
// (cond.go); a purge is a marker in the stream that every edge's feed
// applies as a purge of its store, then a subject-filtered purge of the
// stream (purge.go).
//
// Lock order: feed.applyMu, then feed.mu; publisher.mu is a leaf. The
// publishes' done functions run under feed.applyMu (the feed completes a
// publish as it applies it), never under feed.mu or publisher.mu: they
// must not block, nor call into the journal but for Publish and Stats
// (which take only those two). So do the store's OnCreate hook, as the
// feed creates a channel in the store, and the OnSwitch function
// (switch.go).
package journal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/store"
)

// Defaults of Options.
const (
	DefaultStream         = "SLUICE"
	DefaultMaxAge         = 6 * time.Hour
	DefaultDuplicates     = 30 * time.Second
	DefaultAckWait        = 2 * time.Second
	DefaultPublishTimeout = 20 * time.Second
	subjectPrefix         = "sluice."
)

// ErrUnavailable: JetStream did not acknowledge a publish within the
// publish timeout (NATS unreachable, no stream leader). Whether the
// message was stored is ErrNotStored's or ErrFateUnknown's to say
// (fate.go); an error that wraps neither says nothing of it.
var ErrUnavailable = errors.New("journal: the log did not confirm the message in time")

// Options configure a Journal. A nil *Options, and every zero field,
// means the default.
type Options struct {
	// Stream names the JetStream stream; default SLUICE.
	Stream string
	// Replicas of the stream: 1 (default) for a single node, 3 in a
	// three-node cluster. An existing stream keeps its own.
	Replicas int
	// MaxAge bounds how long the stream keeps a message; default 6h.
	MaxAge time.Duration
	// MaxBytes bounds the stream's size on disk; the oldest messages go
	// first past it. Default 0: no bound but MaxAge.
	MaxBytes int64
	// Duplicates is the window in which a publish retried with the same
	// Msg-Id is stored once; default 30s. JetStream holds each Msg-Id
	// for it, about 100 bytes a publish: 2 minutes at 20,000 publishes a
	// second held 250 MB. It must outlast PublishTimeout by a third.
	Duplicates time.Duration
	// AckWait is how long one publish attempt waits for JetStream's
	// acknowledgment before it is sent again; default 2s.
	AckWait time.Duration
	// PublishTimeout bounds a publish with its retries (it must outlast a
	// leader election); past it the publish fails with ErrFateUnknown if
	// it was sent (the journal goes on asking, fate.go), else with
	// ErrNotStored. Default 20s.
	PublishTimeout time.Duration
	// Replay is how far back the feed starts when the journal opens, to
	// rebuild the store's tail after a restart: the longest TTL plus
	// grace of the apps' rules. Older messages are read from the stream
	// on demand. Default 70s.
	Replay time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// AckLatency, when set, observes the seconds from a publish's first
	// send to JetStream's acknowledgment (a prometheus.Histogram fits).
	AckLatency Observer
	// SoleWriter says nobody but this journal writes to the stream: a
	// durable single node whose NATS no other client can reach (no
	// cluster, no client listener). The feed then appends this journal's
	// acknowledged publishes to the store itself instead of reading each
	// back from the stream, and reads the stream again (at once, from the
	// last sequence it holds) whenever something shows it was not alone.
	// Default false: the feed reads every message from the stream.
	SoleWriter bool
	// OnLost, when set, is called once if the stream is deleted (or
	// deleted and created again) under the journal: the edge should stop
	// and be restarted. See ErrStreamLost.
	OnLost func(error)

	// Interest says the feed brings this edge only the channels it has
	// interest in (Follow), through the stream's RePublish, instead of
	// every message through one ordered consumer (interest.go). Default
	// false: every channel.
	Interest bool

	// Partitions is how many partitions the log has (cluster.partitions),
	// each its own stream and so its own Raft group and leader; a
	// channel's partition is fixed by its key (chanlog.Partition).
	// Default 1: the log is the stream Stream, under sluice.>; with more,
	// partition p is the stream Stream-p under Stream-p.>. A log keeps
	// the partitions it was made with: Open refuses another count
	// (ErrPartitions).
	Partitions int
	// Partition is this journal's, in [0, Partitions): its stream, and
	// the partition of the store it feeds (store.Partitions).
	Partition int

	// watchEvery is how often the watchdog asks the stream for its
	// state; default watchEvery. Tests lengthen it to show that a check
	// does not wait for it.
	watchEvery time.Duration
	// soleGapWait is how long a sole writer holds acknowledgments past a
	// gap; default soleGapWait. Tests lengthen it to show a gap filled
	// without a fallback, or shorten it.
	soleGapWait time.Duration
	// base is Stream as given: the name of a log of one partition, and
	// the prefix of the streams of a log of several.
	base string
}

// Observer receives measurements, as a Prometheus histogram does.
type Observer interface{ Observe(float64) }

func (o *Options) normalize() Options {
	var n Options
	if o != nil {
		n = *o
	}
	if n.Stream == "" {
		n.Stream = DefaultStream
	}
	n.base = n.Stream
	if n.Partitions <= 1 {
		n.Partitions, n.Partition = 1, 0
	} else {
		n.Stream = StreamOf(n.base, n.Partitions, n.Partition)
	}
	if n.Replicas <= 0 {
		n.Replicas = 1
	}
	if n.MaxAge <= 0 {
		n.MaxAge = DefaultMaxAge
	}
	if n.Duplicates <= 0 {
		n.Duplicates = DefaultDuplicates
	}
	n.Duplicates = min(n.Duplicates, n.MaxAge)
	if n.AckWait <= 0 {
		n.AckWait = DefaultAckWait
	}
	if n.PublishTimeout <= 0 {
		n.PublishTimeout = DefaultPublishTimeout
	}
	// A retry past the duplicates window would be stored twice.
	n.PublishTimeout = min(n.PublishTimeout, n.Duplicates*3/4)
	if n.Replay <= 0 {
		n.Replay = store.DefaultTTL + store.DefaultGrace
	}
	if n.Logger == nil {
		n.Logger = slog.Default()
	}
	if n.Interest {
		// The interest feed reads every channel it follows from the
		// stream; a sole writer's own appends are the ordered feed's.
		n.SoleWriter = false
	}
	if n.watchEvery <= 0 {
		n.watchEvery = watchEvery
	}
	if n.soleGapWait <= 0 {
		n.soleGapWait = soleGapWait
	}
	return n
}

// Journal is an edge's handle on the stream: it publishes, feeds the
// edge's store and reads what the store does not hold.
type Journal struct {
	opts   Options
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	epoch  uint64
	direct string // the direct get API subject of the stream
	prefix string // the subject prefix of the stream's channels (subject.go)
	fence  string // the subject of fences (fence.go)
	log    *slog.Logger

	pub      publisher
	feed     feed
	counters counters
	reach    reach // what the watchdog's looks at the stream found (ready.go)
	acked    ackedLooks

	interest *interest // the interest feed (Options.Interest), set by Start
	counts   channelCounts

	lost     atomic.Pointer[error]      // set once by loseStream
	switchFn atomic.Pointer[SwitchFunc] // OnSwitch's
	// skew is how far the stream leader's clock was ahead of this
	// process's when the feed started (Start): a replayed message's
	// stored time, minus skew, is on this edge's clock.
	skew time.Duration
	// purgeMarked, set by tests only, runs between a purge's marker and
	// its purge of the stream.
	purgeMarked func()

	closeOnce sync.Once
	stop      chan struct{}
	wg        sync.WaitGroup
}

// Open creates the stream if missing (retrying until JetStream answers or
// ctx ends: a new cluster elects its meta leader first) and returns a
// Journal on it. Start feeds a store from it.
func Open(ctx context.Context, nc *nats.Conn, opts *Options) (*Journal, error) {
	o := opts.normalize()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{opts: o, nc: nc, js: js, log: o.Logger, stop: make(chan struct{}),
		direct: "$JS.API.DIRECT.GET." + o.Stream, prefix: partitionPrefix(o.Partitions, o.Stream)}
	j.fence = fenceSubject(j.prefix)
	j.feed.j, j.feed.caught, j.feed.kick = j, make(chan struct{}), make(chan struct{}, 1)
	j.feed.owners = make([]owner, ownerRing)
	j.reach.seen.Store(time.Now().UnixNano())
	cfg := jetstream.StreamConfig{
		Name:        o.Stream,
		Description: "Sluice: the messages of every app and channel",
		Subjects:    []string{j.prefix + ">"},
		Storage:     jetstream.FileStorage,
		Replicas:    o.Replicas,
		MaxAge:      o.MaxAge,
		MaxBytes:    o.MaxBytes,
		Discard:     jetstream.DiscardOld,
		Duplicates:  o.Duplicates,
		AllowDirect: true,
		Metadata:    map[string]string{partitionsKey: strconv.Itoa(o.Partitions)},
	}
	if o.Interest {
		cfg.RePublish = republishConfig(o.Stream, j.prefix)
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = -1
	}
	err = j.retry(ctx, "open stream "+o.Stream, func(ctx context.Context) (err error) {
		if err := j.checkPartitions(ctx); err != nil {
			return err
		}
		j.stream, err = j.ensure(ctx, cfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	info := j.stream.CachedInfo()
	j.epoch = uint64(info.Created.UnixMicro())
	if err := j.pub.start(j); err != nil {
		return nil, err
	}
	return j, nil
}

// retry runs fn until it succeeds or ctx ends: a cluster that is forming,
// or electing a stream leader, answers nothing for a few seconds. That
// wait is logged once at info; past retryPatience it is a warning, again
// each time the wait doubles.
func (j *Journal) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	start, warnAt := time.Now(), retryPatience
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := fn(actx)
		cancel()
		if err == nil || errors.Is(err, ErrPartitions) || errors.Is(err, ErrOverlap) {
			return err
		}
		switch waited := time.Since(start); {
		case waited >= warnAt:
			warnAt *= 2
			j.log.Warn("still waiting for JetStream", "stream", j.opts.Stream, "to", what, "waited", waited.Round(time.Second), "err", err)
		case wait == 100*time.Millisecond: // the first failure
			j.log.Info("waiting for JetStream (a cluster answers once a quorum of its nodes is up)", "stream", j.opts.Stream, "to", what, "err", err)
		default:
			j.log.Debug("waiting for JetStream", "stream", j.opts.Stream, "to", what, "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("journal: %s: %w (last error: %v)", what, ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// retryPatience is how long retry waits for JetStream before it warns: a
// cluster whose nodes start together forms within seconds.
const retryPatience = 30 * time.Second

// ensure creates the stream, or finds it and raises its limits to what
// this edge's rules need. It never lowers them: the edges of a cluster
// share the stream, and one started with shorter rules (or mid-rollout of
// a config change) must not cut the history the others keep; lowering is
// an operator's decision (nats stream edit), as are the replicas. A sole
// writer's duplicates window is the one exception: it is its own.
func (j *Journal) ensure(actx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := j.js.Stream(actx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return j.create(actx, cfg)
	}
	if err != nil {
		return nil, err
	}
	if had := madeWith(s); had != cfg.Metadata[partitionsKey] {
		// Made since checkPartitions looked, by an edge with another count.
		return nil, j.partitionsError(had, cfg.Name)
	}
	cur := s.CachedInfo().Config
	want := cur
	if cur.MaxAge != 0 { // 0 is no age limit: looser than any
		want.MaxAge = max(cur.MaxAge, cfg.MaxAge)
	}
	want.Duplicates = max(cur.Duplicates, cfg.Duplicates)
	if j.opts.SoleWriter {
		// The stream's only writer: no other edge needs a longer window,
		// and JetStream's memory for it grows with it.
		want.Duplicates = cfg.Duplicates
	}
	if cur.MaxBytes > 0 && (cfg.MaxBytes <= 0 || cfg.MaxBytes > cur.MaxBytes) {
		want.MaxBytes = cfg.MaxBytes // larger, or unbounded
	}
	looserBytes := cfg.MaxBytes > 0 && (want.MaxBytes <= 0 || want.MaxBytes > cfg.MaxBytes)
	if want.MaxAge == 0 || want.MaxAge > cfg.MaxAge || looserBytes {
		// Not an error: the stream keeps at least what this edge needs.
		j.log.Warn("journal: the stream's limits are looser than this edge's rules need; keeping them (lower them with the nats CLI if no edge needs them)",
			"stream", cfg.Name, "max_age", want.MaxAge, "edge_max_age", cfg.MaxAge, "max_bytes", want.MaxBytes, "edge_max_bytes", cfg.MaxBytes)
	}
	if cfg.RePublish != nil && cur.RePublish == nil {
		// An edge fed by interest needs it; the others ignore it.
		want.RePublish = cfg.RePublish
	}
	if want.Metadata[partitionsKey] == "" {
		// Made before partitions: a log of one.
		want.Metadata = maps.Clone(cur.Metadata)
		if want.Metadata == nil {
			want.Metadata = map[string]string{}
		}
		want.Metadata[partitionsKey] = cfg.Metadata[partitionsKey]
	}
	if want.MaxAge == cur.MaxAge && want.MaxBytes == cur.MaxBytes && want.Duplicates == cur.Duplicates && want.RePublish == cur.RePublish &&
		want.Metadata[partitionsKey] == cur.Metadata[partitionsKey] {
		return s, nil
	}
	return j.js.UpdateStream(actx, want)
}

// Epoch returns the stream's incarnation: the EPOCH of every position.
func (j *Journal) Epoch() uint64 { return j.epoch }

// Retention returns how long the stream keeps a message (its MaxAge as
// the journal found or made it; 0: no age limit). Another edge may raise
// it later, never lower it (ensure).
func (j *Journal) Retention() time.Duration { return j.stream.CachedInfo().Config.MaxAge }

// Stream returns the stream's name.
func (j *Journal) Stream() string { return j.opts.Stream }

// Connected reports whether the connection to NATS is up.
func (j *Journal) Connected() bool { return j.nc.IsConnected() }

// Close stops the feed and the publisher; publishes in flight fail with
// ErrUnavailable. It does not close the NATS connection, which the caller
// owns. Idempotent.
func (j *Journal) Close() {
	j.closeOnce.Do(func() {
		close(j.stop)
		j.acked.close()
		j.feed.close()
		if i := j.interest; i != nil {
			i.close()
		}
		j.pub.close()
	})
	j.wg.Wait()
}
