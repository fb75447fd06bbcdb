package main

// sluice bench: the load generator (cmd/sluice/loadgen) against any RTM v2
// endpoint.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// benchFlags are the flags of bench.
type benchFlags struct {
	common     commonFlags // its url is the first of urls
	urls       urlList
	cfg        loadgen.Config
	perChannel int
	warmup     durationOrSeconds
	duration   durationOrSeconds
	drain      durationOrSeconds
	sample     durationOrSeconds
	jsonOut    bool
	deflate    bool // offer permessage-deflate
	delta      bool // subscribe with deltas
	raw        bool // raw subscribers (loadgen.RTM.RawSubscribers)
	quiet      bool
	verbose    bool
	edgePID    int
	metricsURL string
	pprofURL   string
	profile    string
	selfCPU    string
	connectCPU string
}

const benchUsage = `bench SCENARIO [flags]

Scenarios:
  fanout    one channel, --publishers publishing to --subscribers
  channels  --channels channels with --per-channel subscribers each, the
            publishers spread over them
  idle      --subscribers connections, each subscribed, held for --duration
  publish   acknowledged publishes, --inflight at a time per publisher
  soak      channels at a steady --rate for a long --duration (default
            2,000 subscribers on 200 channels, 1,000 messages/s, 5m),
            --churn subscribers a second killed (connection reset) and
            resumed by position, the edge's memory and goroutines sampled
            every --sample-interval with their slope; exits 1 on any
            message lost, duplicated or reordered, or publish failed

Each publisher runs --inflight lanes, each waiting for its own
acknowledgments. Without --rate they go as fast as the subscribers keep up:
a lane keeps at most --window messages not yet received by every
subscriber. Every
message carries its publisher, a sequence number and its send time, so the
subscribers measure latency (HDR histogram) and count loss, duplicates and
reordering; a --payload feed message is checked byte for byte as well
(after the client applied deltas, with --delta). A line of live figures
goes to standard error every second, the final table (or --json) to
standard output. When the edge runs on this host
its memory and CPU time come from /proc (found by the URL's port, or
--edge-pid), else from its /metrics. The generator's own CPU time is
reported beside the edge's (they share the machine); it collects garbage
at GOGC=400 unless GOGC is set, dials a loopback edge from 127.0.0.1 to
127.0.0.16 in turn (cheaper ramps past 14,000 connections on Linux), and
--cpuprofile and --connect-cpuprofile profile it. Ctrl-C stops early and
still reports (after the messages in flight arrive, up to --drain). Any
scenario exits 1 when a message was lost, duplicated or reordered.

--url may be given more than once, for the edges of one cluster: the
publishers connect to the first, the subscribers round-robin to all of
them, and the report adds a line per edge with its subscribers' latency
from the publish on the first edge (the overall line covers them all).
The memory and CPU reported are the first edge's.`

// parseBench parses bench's arguments.
func parseBench(args []string, s stdio) (*benchFlags, error) {
	fs := newFlagSet("bench", benchUsage, s)
	f := &benchFlags{}
	f.common.registerAuth(fs)
	fs.Var(&f.urls, "url", "edge endpoint, ws:// or wss://; repeat for several edges (env SLUICE_URL; default "+defaultURL+")")
	c := &f.cfg
	fs.IntVar(&c.Publishers, "publishers", 0, "publishing connections (default 1; channels 2)")
	fs.IntVar(&c.Subscribers, "subscribers", 0, "subscribing connections (default 100; idle 1000; publish none); -1 for none")
	fs.IntVar(&c.Channels, "channels", 0, "channels the subscribers spread over (default: channels 100, idle 1)")
	fs.IntVar(&f.perChannel, "per-channel", 0, "subscribers per channel: sets --subscribers to channels × this")
	fs.IntVar(&c.MessageBytes, "size", 0, fmt.Sprintf("message size in bytes, at least %d (default 128)", loadgen.StampSize))
	fs.Float64Var(&c.Rate, "rate", 0, "total messages per second over all publishers (default: as fast as --window allows)")
	fs.IntVar(&c.Window, "window", 0, "messages a lane keeps in flight, not yet received by every subscriber (default 64)")
	fs.IntVar(&c.Inflight, "inflight", 0, "lanes per publisher, each with one acknowledged publish outstanding (default 8; fanout and channels 64, publish 16)")
	fs.BoolVar(&c.NoAck, "no-ack", false, "publish without acknowledgment (RTM publish without id)")
	fs.StringVar(&c.Payload, "payload", "", fmt.Sprintf("what messages hold: %s (a stamp and padding, the default) or %s (a JSON object of about --size bytes, default 2048, of which a few fields change per message)", loadgen.PayloadPadded, loadgen.PayloadFeed))
	fs.BoolVar(&f.delta, "delta", false, "subscribe with deltas (Sluice's delta extension; try it with --payload feed)")
	fs.BoolVar(&f.raw, "raw-subscribers", false, "subscribers read their JSON PDUs and check each message as it came (deltas applied) without the client decoding it: a feed's check then costs the generator a few µs a delivery (--codec json, app key only)")
	fs.BoolVar(&f.deflate, "deflate", false, "offer permessage-deflate on every connection (the app must enable it: apps[].deflate)")
	fs.Float64Var(&c.ConnectRate, "connect-rate", 0, "new connections per second while ramping up (default: unbounded)")
	fs.IntVar(&c.ConnectWorkers, "connect-workers", 0, "connections being opened at once (default 256)")
	fs.Var(&f.warmup, "warmup", "publishing before the measured window (default 1s; idle none)")
	fs.Var(&f.duration, "duration", "the measured window; idle: how long connections are held (default 10s)")
	fs.Var(&f.drain, "drain", "wait for messages in flight after the window (default 3s)")
	fs.StringVar(&c.ChannelPrefix, "prefix", "", "channel name prefix (default bench.RANDOM.)")
	fs.Float64Var(&c.Churn, "churn", 0, "subscribers a second whose connection is reset, each resuming by position (default 0; soak 4)")
	fs.Var(&f.sample, "sample-interval", "how often the edge's memory and goroutines are sampled (default: soak 2s, else not)")
	fs.BoolVar(&f.jsonOut, "json", false, "print the result as JSON")
	fs.BoolVar(&f.quiet, "quiet", false, "no live line")
	fs.BoolVar(&f.verbose, "verbose", false, "log the clients' warnings (reconnections) to standard error")
	fs.IntVar(&f.edgePID, "edge-pid", 0, "the edge's process id, for its memory and CPU time from /proc")
	fs.StringVar(&f.metricsURL, "metrics-url", "", "the edge's Prometheus endpoint (default: /metrics beside --url; off: none)")
	fs.StringVar(&f.pprofURL, "pprof-url", "", "the edge's admin listener, as http://127.0.0.1:9090, to take a CPU profile of the window from")
	fs.StringVar(&f.profile, "edge-profile", "", "file to write that CPU profile to (needs --pprof-url)")
	fs.StringVar(&f.selfCPU, "cpuprofile", "", "file to write the generator's own CPU profile of the measured window (idle: the hold) to")
	fs.StringVar(&f.connectCPU, "connect-cpuprofile", "", "file to write the generator's own CPU profile of the subscribers' ramp to")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, fmt.Errorf("%w: want SCENARIO (one of %v)", errUsage, loadgen.Scenarios)
	}
	if len(f.urls) > 0 {
		f.common.url = f.urls[0]
	}
	c.Scenario = loadgen.Scenario(pos[0])
	if !slices.Contains(loadgen.Scenarios, c.Scenario) {
		return nil, fmt.Errorf("%w: unknown scenario %q (want one of %v)", errUsage, pos[0], loadgen.Scenarios)
	}
	if f.perChannel > 0 {
		c.Subscribers = f.perChannel * max(c.Channels, 1)
		if c.Channels == 0 && c.Scenario == loadgen.Channels {
			c.Subscribers = f.perChannel * 100
		}
	}
	c.Warmup, c.Duration, c.Drain, c.SampleInterval = f.warmup.d, f.duration.d, f.drain.d, f.sample.d
	if (f.profile == "") != (f.pprofURL == "") {
		return nil, fmt.Errorf("%w: --edge-profile and --pprof-url go together", errUsage)
	}
	return f, nil
}

// runBench runs a load scenario against an RTM v2 endpoint.
func runBench(ctx context.Context, args []string, s stdio) error {
	f, err := parseBench(args, s)
	if err != nil {
		return err
	}
	cfg, err := f.cfg.WithDefaults()
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := checkOpenFiles(cfg.Connections()); err != nil {
		return err
	}
	f.common.fill()
	if err := f.common.check(); err != nil {
		return err
	}
	if f.raw && (f.common.codec != "json" || f.common.role != "" || f.common.token != "" || cfg.Churn > 0) {
		return fmt.Errorf("%w: --raw-subscribers needs --codec json, an app key alone and no --churn", errUsage)
	}
	logger := slog.New(slog.DiscardHandler)
	if f.verbose {
		logger = slog.New(slog.NewTextHandler(s.errw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	var more []string
	if len(f.urls) > 1 {
		more = f.urls[1:]
	}
	drv := &loadgen.RTM{Label: "sluice", URL: f.common.url, MoreURLs: more, Options: client.Options{
		AppKey: f.common.appkey, Role: f.common.role, RoleSecret: f.common.secret, Token: f.common.token,
		Codec: f.common.codec, Logger: logger, Deflate: f.deflate,
	}, Delta: f.delta, RawSubscribers: f.raw}
	opts := &loadgen.Options{} // GOGC=400 unless GOGC is set (Options.GCPercent)
	opts.Server, opts.Metrics = edgeProbes(ctx, f, s.errw)
	if !f.quiet {
		opts.OnTick = func(t loadgen.Tick) { fmt.Fprintln(s.errw, t) }
	}
	if f.profile != "" {
		opts.OnMeasure = func(mctx context.Context, window time.Duration) {
			if err := fetchProfile(mctx, f.pprofURL, window, f.profile); err != nil {
				fmt.Fprintf(s.errw, "sluice bench: edge profile: %v\n", err)
			}
		}
	}
	if p := newSelfProfiler(f.selfCPU, f.connectCPU, s.errw); p != nil {
		opts.OnPhase = p.phase
		defer p.stop()
	}
	res, err := loadgen.Run(ctx, drv, cfg, opts)
	if errors.Is(err, loadgen.ErrConfig) {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err != nil {
		return cliError(err)
	}
	if err := writeResult(s.out, res, f.jsonOut); err != nil {
		return err
	}
	// Either fails the run: messages lost, repeated or reordered (for a
	// soak, any failed request), and requests the edge refused.
	return errors.Join(res.Check(), refusals(res))
}

// refusals fails a run in which the endpoint refused requests: its
// figures then measure the refusals, not the system (a run against a
// default edge past its per-connection rate limit refused most of its
// publishes and still looked like a result). It names the setting to
// raise when the refusals are the rate limit's.
func refusals(res *loadgen.Result) error {
	var n uint64
	var first string
	limited := false
	for _, name := range slices.Sorted(maps.Keys(res.Errors)) {
		e := res.Errors[name]
		if !strings.Contains(name, "refused") && !strings.Contains(e.First, string(rtm.CodeTooManyRequests)) {
			continue
		}
		n += e.Count
		if first == "" {
			first = e.First
		}
		limited = limited || strings.Contains(e.First, string(rtm.CodeTooManyRequests))
	}
	switch {
	case n == 0:
		return nil
	case limited:
		return fmt.Errorf("%d requests refused, the first: %s; the edge's per-connection rate limit: "+
			"raise limits.requests_per_second (and limits.request_burst) in its configuration, or bench with a lower --rate", n, first)
	default:
		return fmt.Errorf("%d requests refused, the first: %s", n, first)
	}
}

// urlList is a repeatable --url.
type urlList []string

func (u *urlList) String() string { return strings.Join(*u, ",") }

func (u *urlList) Set(v string) error {
	if v == "" {
		return errors.New("empty URL")
	}
	*u = append(*u, endpointURL(v))
	return nil
}

// writeResult prints the result as a table or as JSON.
func writeResult(w io.Writer, res *loadgen.Result, asJSON bool) error {
	if !asJSON {
		return res.WriteText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// checkOpenFiles raises the open-files limit and checks that the
// connections fit under it, with room for the process's other files.
func checkOpenFiles(conns int) error {
	limit, err := loadgen.RaiseOpenFiles()
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return nil
		}
		return err
	}
	if need := uint64(conns) + 100; need > limit {
		return fmt.Errorf("%w: %d connections need about %d open files, and this process may open %d (ulimit -Hn)",
			errUsage, conns, need, limit)
	}
	return nil
}
