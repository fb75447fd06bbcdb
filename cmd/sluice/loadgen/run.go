package loadgen

import (
	"context"
	"errors"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options are the hooks of a run. A nil *Options means none.
type Options struct {
	// Server samples the server's memory and CPU; nil: not reported.
	Server Probe
	// Metrics, when set, is scraped at the end of the window; its
	// unlabelled samples (but the Go runtime's) go to
	// Result.ServerMetrics.
	Metrics *MetricsProbe
	// OnTick receives the live figures every Interval, on the run's
	// reporting goroutine; it must not block for long.
	OnTick func(Tick)
	// Interval between ticks; default 1s.
	Interval time.Duration
	// OnMeasure, when set, runs on its own goroutine for the measured
	// window (or the idle hold) with a context that ends with it, such as
	// to fetch a CPU profile of the server; the run waits for it.
	OnMeasure func(ctx context.Context, window time.Duration)
	// OnPhase, when set, is called on the run's goroutine as each phase
	// starts, before its work, such as to profile the generator over one
	// phase; it must not block for long.
	OnPhase func(Phase)
	// GCPercent is the garbage collector's target while the run lasts
	// (as GOGC; see runtime/debug.SetGCPercent), restored after it. The
	// generator shares the machine with the server, so every collection
	// is CPU time taken from the server: memory is the cheaper of the
	// two. A process already running at a higher target (or with the
	// collector off) keeps its own. Default 400, unless the GOGC
	// environment variable is set: the target the runtime took from it
	// is then left alone, as the user chose it. Negative leaves the
	// process's setting alone in any case.
	GCPercent int
}

// DefaultGCPercent is Options.GCPercent's default: about a fourth of the
// collections of Go's default (100), for about twice the memory.
const DefaultGCPercent = 400

// run is the state of one Run.
type run struct {
	cfg          Config
	d            Driver
	opts         Options
	epoch        time.Time
	channelNames []string
	subs         []*subscriber
	lanes        []*lane
	subConns     []Conn // parallel to subs; nil where the connection failed
	pubConns     []Conn
	nodes        nodes // of a NodeDriver; none for one server
	feedLevels   int   // the levels of a feed message (Config.Payload)
	feeds        feedCache

	lat, ack, dialLat *Latency
	problems          problems
	open              atomic.Int64 // connections open, for the live line
	phase             atomic.Int32 // a Phase

	self     Probe
	giveUp   giveUpClock // times the stall and drain waits
	sampler  *sampler    // the window's resource samples; set by startWindow
	res      Result
	marks    [4]mark // by markBefore...markEnd
	measured sync.WaitGroup
}

// Indexes of run.marks.
const (
	markBefore    = iota // before the first connection
	markConnected        // once the subscribers are connected
	markStart            // at the start of the measured window
	markEnd              // at its end
)

// mark is the counters at one moment.
type mark struct {
	at        time.Time
	published uint64
	delivered int64
	server    *Sample
	self      *Sample
}

// Run runs one scenario against a driver's server and returns what it
// measured. It stops by itself after the configured durations; when ctx
// ends first, it stops early (still waiting, up to Config.Drain, for the
// messages in flight), closes every connection and returns what it
// measured so far with Result.Interrupted set. Every goroutine it starts
// has ended when it returns.
func Run(ctx context.Context, d Driver, cfg Config, opts *Options) (*Result, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	r := newRun(d, cfg, opts)
	defer raiseGCPercent(r.opts.GCPercent)()
	return r.run(ctx)
}

// raiseGCPercent raises the collector's target to pct (0: the default,
// or none when GOGC is set) unless it is higher already or off, and
// returns what restores it.
func raiseGCPercent(pct int) (restore func()) {
	if pct == 0 {
		pct = DefaultGCPercent
		if _, ok := os.LookupEnv("GOGC"); ok {
			pct = -1 // the user's GOGC, which the runtime applied
		}
	}
	prev := gcPercent()
	if pct < 0 || prev < 0 || prev >= pct {
		return func() {}
	}
	debug.SetGCPercent(pct)
	return func() { debug.SetGCPercent(prev) }
}

// gcPercent returns the collector's target (GOGC), -1 when it is off.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1 // unknown: leave it alone
	}
	return int(int64(s[0].Value.Uint64())) // off is -1, read as 2^64-1
}

// newRun lays out the channels, subscribers and lanes of a configuration.
func newRun(d Driver, cfg Config, opts *Options) *run {
	r := &run{cfg: cfg, d: d, epoch: time.Now(), giveUp: clockOf(d), nodes: newNodes(d)}
	if self := (ProcProbe{PID: os.Getpid()}); r.canSample(self) {
		r.self = self
	}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Interval <= 0 {
		r.opts.Interval = time.Second
	}
	if cfg.Payload == PayloadFeed {
		r.feedLevels = feedLevels(cfg.MessageBytes)
	}
	r.lat, r.ack, r.dialLat = NewLatency(latencyShards), NewLatency(latencyShards), NewLatency(latencyShards)
	r.channelNames = make([]string, cfg.Channels)
	for i := range r.channelNames {
		r.channelNames[i] = cfg.channel(i)
	}
	r.lanes = r.layoutLanes()
	onChannel := make([][]uint16, cfg.Channels) // lane ids by channel, ascending
	for _, l := range r.lanes {
		for _, c := range l.channels {
			onChannel[c] = append(onChannel[c], l.id)
		}
	}
	r.subs = make([]*subscriber, cfg.Subscribers)
	for i := range r.subs {
		c := i % cfg.Channels
		r.subs[i] = &subscriber{idx: i, channel: c, node: r.nodes.of(i), r: r,
			lanes: onChannel[c], streams: make([]Stream, len(onChannel[c]))}
	}
	r.subConns = make([]Conn, cfg.Subscribers)
	return r
}

// layoutLanes gives every publisher Inflight lanes. Publisher p owns the
// channels c with c % Publishers == p (in the publish scenario, channel
// p % Channels alone); its lanes share them out round-robin, or all
// publish to the same one when there are fewer channels than lanes.
func (r *run) layoutLanes() []*lane {
	cfg := &r.cfg
	per := cfg.Inflight
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(cfg.Publishers*per) / cfg.Rate)
	}
	total := cfg.Publishers * per
	lanes := make([]*lane, 0, total)
	for p := range cfg.Publishers {
		var chans []int
		for c := p % cfg.Channels; c < cfg.Channels; c += cfg.Publishers {
			chans = append(chans, c)
		}
		if cfg.Scenario == Publish {
			chans = []int{p % cfg.Channels}
		}
		for k := range per {
			var mine []int
			for j := k; j < len(chans); j += per {
				mine = append(mine, chans[j])
			}
			if len(mine) == 0 {
				mine = []int{chans[k%len(chans)]}
			}
			// At a fixed rate the lanes take turns, evenly spaced, so
			// that the rate is steady rather than bursts of every lane.
			offset := interval * time.Duration(len(lanes)) / time.Duration(total)
			g := newGate(0, 0)
			g.clock = r.giveUp
			lanes = append(lanes, &lane{
				id: uint16(len(lanes)), channels: mine, seqs: make([]uint64, len(mine)),
				gate: g, interval: interval, offset: offset,
			})
		}
	}
	return lanes
}

// setPhase enters a phase and tells OnPhase.
func (r *run) setPhase(p Phase) {
	r.phase.Store(int32(p))
	if r.opts.OnPhase != nil {
		r.opts.OnPhase(p)
	}
}

// clock is the run's monotonic time, which stamps carry.
func (r *run) clock() time.Duration { return time.Since(r.epoch) }

// run executes the phases.
func (r *run) run(ctx context.Context) (*Result, error) {
	if _, err := RaiseOpenFiles(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		r.problems.add("open files", err)
	}
	r.marks[markBefore] = r.mark(ctx)
	stopTicks := r.startTicker()
	defer stopTicks()

	r.setPhase(PhaseConnect)
	ramp := r.connectSubscribers(ctx)
	r.res.Connect = r.connectStats(ramp)
	r.marks[markConnected] = r.mark(ctx)
	var err error
	if ctx.Err() == nil {
		if r.cfg.Scenario == Idle {
			r.hold(ctx)
		} else {
			err = r.traffic(ctx)
		}
	}
	r.setPhase(PhaseClose)
	r.closeAll()
	r.measured.Wait()
	stopTicks()
	r.finish(ctx.Err() != nil)
	return &r.res, err
}

// hold keeps the idle connections open for Duration: the measured window.
func (r *run) hold(ctx context.Context) {
	r.setPhase(PhaseHold)
	r.startWindow(ctx)
	sleepUntil(ctx, time.Now().Add(r.cfg.Duration))
	r.endWindow(ctx)
}

// traffic publishes for the warm-up and the window, then drains.
func (r *run) traffic(ctx context.Context) error {
	if err := r.connectPublishers(ctx); err != nil {
		return err
	}
	perChannel := make([]int, r.cfg.Channels)
	for i, c := range r.subConns {
		if c != nil {
			perChannel[r.subs[i].channel]++
		}
	}
	for _, l := range r.lanes {
		l.setFanout(r.cfg.Window, perChannel)
	}
	kills, err := r.startChurn(ctx)
	if err != nil {
		return err
	}
	soft, stop := context.WithCancel(ctx)
	hard, kill := context.WithCancel(context.WithoutCancel(ctx))
	defer kill()
	var wg sync.WaitGroup
	for _, l := range r.lanes {
		wg.Go(func() { l.run(soft, hard, r) })
	}
	r.setPhase(PhaseWarmup)
	if sleepUntil(ctx, time.Now().Add(r.cfg.Warmup)) {
		r.setPhase(PhaseMeasure)
		r.startWindow(ctx)
		sleepUntil(ctx, time.Now().Add(r.cfg.Duration))
		r.endWindow(ctx)
	}
	stop()
	kills.end(&r.res) // the last ones killed resume during the drain
	// A synchronous publish still waiting for its acknowledgment gets the
	// drain time to complete, then is cut off (an asynchronous one's
	// lane times its own).
	stopCutOff := afterGiveUp(r.giveUp, r.cfg.Drain, kill)
	wg.Wait()
	stopCutOff()
	r.setPhase(PhaseDrain)
	// Drained even when ctx ended (Ctrl-C), bounded by the drain's own
	// waits: what the subscribers are still owed arrives rather than
	// being counted lost, so an interrupted run's figures hold too.
	r.drain(context.WithoutCancel(ctx))
	return nil
}

// drain waits for the messages in flight to arrive: until nothing is
// owed, or no message arrived for Drain (on a loaded machine the last ones
// may take a while, and are not lost), or ten times Drain passed.
func (r *run) drain(ctx context.Context) {
	idle := r.giveUp.newTimer(r.cfg.Drain)
	defer idle.Stop()
	most := r.giveUp.newTimer(10 * r.cfg.Drain)
	defer most.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	last := r.made()
	for !r.drained() {
		select {
		case <-tick.C:
			if n := r.made(); n != last {
				last = n
				idle.Reset(r.cfg.Drain)
			}
		case <-idle.C():
			return
		case <-most.C():
			return
		case <-ctx.Done():
			return
		}
	}
}

// drained reports whether every lane's messages reached every subscriber
// (once the lanes stopped).
func (r *run) drained() bool {
	for _, l := range r.lanes {
		if !l.gate.drained() {
			return false
		}
	}
	return true
}

// made returns the deliveries made of every lane's messages (any
// goroutine): what drain watches, and the distinct messages the
// subscribers received.
func (r *run) made() uint64 {
	var n uint64
	for _, l := range r.lanes {
		n += l.gate.made.Load()
	}
	return n
}

// startWindow marks the start of the measured window.
func (r *run) startWindow(ctx context.Context) {
	r.lat.Reset()
	r.ack.Reset()
	r.nodes.startWindow(r.subs)
	r.marks[markStart] = r.mark(ctx)
	r.sampler = r.startSampler(ctx)
	if r.opts.OnMeasure == nil {
		return
	}
	mctx, cancel := context.WithTimeout(ctx, r.cfg.Duration)
	r.measured.Go(func() {
		defer cancel()
		r.opts.OnMeasure(mctx, r.cfg.Duration)
	})
}

// endWindow marks the end of the measured window.
func (r *run) endWindow(ctx context.Context) {
	r.marks[markEnd] = r.mark(ctx)
	r.sampler.end(ctx, &r.res)
	// The nodes' figures are read before the scrape, which takes a
	// while, so that they cover the window alone.
	all, multi := r.nodes.endWindow(r.subs)
	r.scrape(ctx)
	r.res.Latency = r.lat.Total()
	r.res.PublishLatency = r.ack.Total()
	if multi {
		r.res.Latency = all // the nodes' together, so that they add up
	}
}

// mark reads the counters and samples the processes.
func (r *run) mark(ctx context.Context) mark {
	m := mark{at: time.Now(), delivered: int64(r.made())}
	for _, l := range r.lanes {
		m.published += l.published.Load()
	}
	m.server = r.sample(ctx, r.opts.Server)
	m.self = r.sample(ctx, r.self)
	return m
}

// scrape keeps the server's metrics at the end of the window.
func (r *run) scrape(ctx context.Context) {
	if r.opts.Metrics == nil {
		return
	}
	m, err := r.opts.Metrics.Scrape(ctx)
	if err != nil {
		if ctx.Err() == nil { // an interrupted run's scrape is cut short, not failed
			r.problems.add("metrics", err)
		}
		return
	}
	for name := range m {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "promhttp_") {
			delete(m, name)
		}
	}
	r.res.ServerMetrics = m
}

// canSample reports whether a probe works here (/proc exists).
func (r *run) canSample(p Probe) bool {
	_, err := p.Sample(context.Background())
	return err == nil
}

// sample samples a probe; nil when there is none or it failed (counted).
func (r *run) sample(ctx context.Context, p Probe) *Sample {
	if p == nil {
		return nil
	}
	s, err := p.Sample(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.problems.add("probe", err)
		}
		return nil
	}
	return &s
}
