// Command compare runs the same load scenarios against Sluice (built from
// this tree) and Centrifugo v6.9.1 on this machine, alternating the two,
// and prints both systems' figures side by side with their ratio and the
// targets of the performance issue. `make bench-compare` runs it. It
// writes each scenario's figures, with the command, the machine and the
// date, to docs/benchmarks/compare-<scenario>.md (and .json), indexed by
// docs/benchmarks/compare.md, so that no figure of it is copied by hand.
//
// It is its own Go module so that the product's go.mod does not depend on
// the peer. Both servers run as child processes on loopback; the load
// generator (cmd/sluice/loadgen) runs in this process and reads each server's
// memory and CPU time from /proc (Linux only).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// options are the command's flags.
type options struct {
	quick             bool
	only              string
	systems           string
	fanoutSubscribers int
	fanoutRate        float64
	channels          int
	perChannel        int
	channelPublishers int
	idle              int
	connectRate       float64
	connectWorkers    int
	inflight          int
	size              int
	duration          time.Duration
	warmup            time.Duration
	drain             time.Duration
	rounds            int
	sluiceCodec       string
	centrifugoJSON    bool
	repo              string
	sluiceBin         string
	centrifugoBin     string
	floor             bool
	floorBin          string
	redisBin          string
	replicas          int
	durableSync       string // cluster.sync of the durable edge; "": the edge's default
	profileDir        string
	genProfile        string
	jsonPath          string
	resultsDir        string // the generated files' directory
	noResults         bool
	notes             string
	command           string // how to run this again, for the generated files
	quiet             bool
	strict            bool
	workDir           string // temporary: config files
}

// errTargets reports, with --strict, that Sluice missed a target.
var errTargets = errors.New("compare: targets missed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// parseFlags reads the flags; --quick changes the defaults of the sizes
// not given explicitly.
func parseFlags(args []string, errw io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(errw)
	fs.BoolVar(&o.quick, "quick", false, "a smoke run: 200 subscribers, 500 channels, 2,000 idle connections, 5s windows, one round")
	only := "comma-separated scenarios: of " + strings.Join(scenarioNames, ",") + " (the default), " +
		strings.Join(clusterNames, ",") + ", or cluster for those four"
	fs.StringVar(&o.only, "scenarios", "", only)
	fs.StringVar(&o.only, "only", "", "the same as --scenarios")
	fs.StringVar(&o.systems, "systems", "sluice,centrifugo", "systems to run, in the first round's order")
	fs.IntVar(&o.fanoutSubscribers, "fanout-subscribers", 1000, "subscribers of the fanout scenarios")
	fs.Float64Var(&o.fanoutRate, "fanout-rate", 40, "messages per second of the fixed-rate fanout")
	fs.IntVar(&o.channels, "channels", 5000, "channels of the channels scenario")
	fs.IntVar(&o.perChannel, "per-channel", 2, "subscribers per channel of the channels scenario")
	fs.IntVar(&o.channelPublishers, "channel-publishers", 2, "publishers of the channels scenario")
	fs.IntVar(&o.idle, "idle", 19000, "connections of the idle scenario (the open-files limit is 20,000)")
	fs.Float64Var(&o.connectRate, "connect-rate", 0, "new connections per second while ramping up (0: as fast as they open)")
	fs.IntVar(&o.connectWorkers, "connect-workers", 256, "connections being opened at once")
	fs.IntVar(&o.inflight, "inflight", 0, "publishes outstanding per publisher (default: the load generator's per scenario)")
	fs.IntVar(&o.size, "size", 128, "message size in bytes")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured window of each run")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "publishing before the window")
	fs.DurationVar(&o.drain, "drain", 3*time.Second, "after the window, wait until no message arrived for this long")
	fs.IntVar(&o.rounds, "rounds", 3, "times each scenario runs on each system; the summary takes medians (single runs vary by 10-15% on a 2-vCPU VM)")
	fs.StringVar(&o.sluiceCodec, "sluice-codec", "msgpack", "codec of the Sluice clients: msgpack or json")
	fs.BoolVar(&o.centrifugoJSON, "centrifugo-json", false, "use Centrifugo's JSON protocol instead of protobuf")
	fs.StringVar(&o.repo, "repo", "../..", "the Sluice tree to build `sluice` from")
	fs.StringVar(&o.sluiceBin, "sluice-bin", "", "a sluice binary to use instead of building one")
	fs.BoolVar(&o.floor, "floor", true, "also run the floor (./floor: the least a server can do for these clients) in the unbatched scenarios, and report CPU per delivery as a ratio to it")
	fs.StringVar(&o.centrifugoBin, "centrifugo-bin", "", "a Centrifugo v6 binary (default: built once into the user cache)")
	fs.StringVar(&o.redisBin, "redis-bin", "/usr/bin/redis-server", "redis-server for Centrifugo's engine in the cluster scenarios ("+redisApt+")")
	fs.IntVar(&o.replicas, "sluice-replicas", 2, "replicas of the stream of the two-edge Sluice cluster (1 or 2)")
	fs.StringVar(&o.durableSync, "durable-sync", "", "cluster.sync of the durable scenario's edge: always or an interval such as 2m (default: the edge's, always)")
	fs.StringVar(&o.profileDir, "profile-dir", "", "write a CPU profile of the Sluice edge per scenario here (pprof)")
	fs.StringVar(&o.genProfile, "generator-profile", "", "write a CPU profile of the load generator (this process) to this file")
	fs.StringVar(&o.jsonPath, "json", "", "write every result as JSON to this file")
	fs.StringVar(&o.resultsDir, "results-dir", "", "write each scenario's figures with the command, machine and date to DIR/compare-<scenario>.md and .json, and the index DIR/compare.md (default: docs/benchmarks of --repo)")
	fs.BoolVar(&o.noResults, "no-results", false, "write no files to --results-dir (a trial run)")
	fs.StringVar(&o.notes, "notes", "", "a note for the generated files, such as what else the machine was running")
	fs.BoolVar(&o.quiet, "quiet", false, "no live lines")
	fs.BoolVar(&o.strict, "strict", false, "exit 1 when Sluice misses a target")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.resultsDir == "" {
		o.resultsDir = filepath.Join(o.repo, "docs", "benchmarks")
	}
	o.command = commandLine(fs)
	if o.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		quickDefaults(o, set)
	}
	return o, nil
}

// quickDefaults shrinks the sizes for a smoke run.
func quickDefaults(o *options, set map[string]bool) {
	apply := func(name string, f func()) {
		if !set[name] {
			f()
		}
	}
	apply("fanout-subscribers", func() { o.fanoutSubscribers = 200 })
	apply("channels", func() { o.channels = 500 })
	apply("idle", func() { o.idle = 2000 })
	apply("duration", func() { o.duration = 5 * time.Second })
	apply("warmup", func() { o.warmup = time.Second })
	apply("rounds", func() { o.rounds = 1 })
}

// run is the whole command.
func run(ctx context.Context, args []string, out, errw io.Writer) error {
	o, err := parseFlags(args, errw)
	if err != nil {
		return err
	}
	specs, err := plan(o)
	if err != nil {
		return err
	}
	systems, err := pickSystems(o.systems)
	if err != nil {
		return err
	}
	givenSluice := o.sluiceBin
	if err := prepare(ctx, o, specs, systems, errw); err != nil {
		return err
	}
	defer os.RemoveAll(o.workDir)
	if o.genProfile != "" {
		stop, err := profileSelf(o.genProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	info := describeRun(ctx, o, givenSluice)
	results := runAll(ctx, o, specs, systems, out, errw)
	info.Finished, info.LoadEnd = time.Now().UTC(), loadAverage("/proc")
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, results); err != nil {
			return err
		}
	}
	missed := writeSummary(out, specs, results)
	if ctx.Err() != nil {
		// An interrupted run's figures do not replace a whole run's.
		return ctx.Err()
	}
	if !o.noResults {
		written, err := writeResults(o.resultsDir, info, specs, results)
		for _, path := range written {
			fmt.Fprintln(errw, "wrote", path)
		}
		if err != nil {
			return err
		}
	}
	if o.strict && missed > 0 {
		return fmt.Errorf("%w: %d", errTargets, missed)
	}
	return nil
}

// describeRun is the generated files' header of a run about to start:
// givenSluice is --sluice-bin as given ("" when Sluice was built from
// --repo).
func describeRun(ctx context.Context, o *options, givenSluice string) runInfo {
	info := runInfo{Command: o.command, Machine: readMachine("/proc"), Sluice: sluiceVersion(ctx, o.repo, givenSluice),
		Rounds: o.rounds, Notes: o.notes}
	if o.centrifugoBin != "" {
		info.Centrifugo = centrifugoVersion(ctx, o.centrifugoBin)
	}
	info.Started, info.LoadStart = time.Now().UTC(), loadAverage("/proc")
	return info
}

// unrecorded are the flags that change nothing measured: the command the
// generated files give leaves them out.
var unrecorded = map[string]bool{"results-dir": true, "no-results": true, "notes": true, "quiet": true, "json": true, "strict": true}

// commandLine is the make command that runs the comparison again with
// the flags given (as parsed, so --only x and --only=x read alike).
func commandLine(fs *flag.FlagSet) string {
	var args []string
	fs.Visit(func(f *flag.Flag) {
		if unrecorded[f.Name] {
			return
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() && f.Value.String() == "true" {
			args = append(args, "--"+f.Name)
			return
		}
		args = append(args, "--"+f.Name+"="+shellQuote(f.Value.String()))
	})
	if len(args) == 0 {
		return "make bench-compare"
	}
	return "make bench-compare COMPARE_FLAGS=" + shellQuote(strings.Join(args, " "))
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,/:@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pickSystems parses --systems.
func pickSystems(list string) ([]system, error) {
	var out []system
	for name := range strings.SplitSeq(list, ",") {
		switch strings.TrimSpace(name) {
		case "sluice":
			out = append(out, sluiceSystem())
		case "centrifugo":
			out = append(out, centrifugoSystem())
		default:
			return nil, fmt.Errorf("unknown system %q (want sluice, centrifugo)", name)
		}
	}
	return out, nil
}

// prepare checks for Redis, and makes the work directory and the
// binaries.
func prepare(ctx context.Context, o *options, specs []spec, systems []system, errw io.Writer) error {
	for _, s := range systems {
		if s.name == "centrifugo" && slices.ContainsFunc(specs, func(sp spec) bool { return sp.topo == twoNodes }) {
			if err := checkRedis(o.redisBin); err != nil {
				return err
			}
		}
	}
	dir, err := os.MkdirTemp("", "sluice-compare-")
	if err != nil {
		return err
	}
	o.workDir = dir
	for _, s := range systems {
		switch {
		case s.name == "sluice" && o.sluiceBin == "":
			fmt.Fprintln(errw, "building sluice from", o.repo)
			o.sluiceBin, err = buildSluice(ctx, o.repo, dir)
		case s.name == "centrifugo" && o.centrifugoBin == "":
			o.centrifugoBin, err = installCentrifugo(ctx, errw)
		}
		if err != nil {
			os.RemoveAll(dir)
			return err
		}
	}
	if o.floor && slices.ContainsFunc(specs, func(sp spec) bool { return sp.floor }) {
		fmt.Fprintln(errw, "building the floor")
		if o.floorBin, err = buildFloor(ctx, o.repo, dir); err != nil {
			os.RemoveAll(dir)
			return err
		}
	}
	if o.profileDir != "" {
		return os.MkdirAll(o.profileDir, 0o755)
	}
	return nil
}

// outcome is one run of one scenario on one system.
type outcome struct {
	Scenario string          `json:"scenario"`
	System   string          `json:"system"`
	Round    int             `json:"round"`
	Result   *loadgen.Result `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// runAll runs every scenario on every system, rounds times, alternating
// which system goes first.
func runAll(ctx context.Context, o *options, specs []spec, systems []system, out, errw io.Writer) []outcome {
	var all []outcome
	for _, sp := range specs {
		for round := range o.rounds {
			order := systemsFor(o, sp, systems)
			if round%2 == 1 {
				order = reversed(order)
			}
			for _, sys := range order {
				if ctx.Err() != nil {
					return all
				}
				res, err := runOne(ctx, o, sys, sp, errw)
				oc := outcome{Scenario: sp.name, System: sys.name, Round: round + 1, Result: res}
				if err != nil {
					oc.Error = err.Error()
					fmt.Fprintf(out, "%s on %s: %v\n\n", sp.name, sys.name, err)
				} else {
					fmt.Fprintf(out, "== %s (round %d): %s\n", sp.name, round+1, sp.title)
					res.WriteText(out)
					fmt.Fprintln(out)
				}
				all = append(all, oc)
			}
		}
	}
	return all
}

func reversed(s []system) []system {
	r := make([]system, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

// runOne starts a system, runs one scenario on it and stops it.
func runOne(ctx context.Context, o *options, sys system, sp spec, errw io.Writer) (*loadgen.Result, error) {
	if sp.codec != "" {
		withCodec := *o
		withCodec.sluiceCodec = sp.codec
		o = &withCodec
	}
	g, drv, err := sys.start(ctx, o, sp.topo)
	if err != nil {
		return nil, err
	}
	defer g.stop()
	opts := &loadgen.Options{Server: g.probe()}
	if !o.quiet {
		prefix := fmt.Sprintf("[%s %s] ", sys.name, sp.name)
		opts.OnTick = func(t loadgen.Tick) { fmt.Fprintln(errw, prefix+t.String()) }
	}
	if g.admin != "" && o.profileDir != "" {
		// The durable scenario profiles two Sluice deployments: the
		// durable edge's profile is named after it.
		name := sp.name
		if sys.name != "sluice" {
			name += "-" + sys.name
		}
		path := filepath.Join(o.profileDir, name+".pprof")
		opts.OnMeasure = func(mctx context.Context, window time.Duration) {
			if err := profileTo(mctx, g.admin, window, path); err != nil {
				fmt.Fprintf(errw, "profile %s: %v\n", sp.name, err)
			}
		}
	}
	res, err := loadgen.Run(ctx, drv, sp.cfg, opts)
	if exit := g.exited(); exit != nil {
		return res, fmt.Errorf("%s: during the run, %w", sys.name, exit)
	}
	return res, err
}

// profileTo writes a CPU profile of the window to path.
func profileTo(ctx context.Context, admin string, window time.Duration, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = loadgen.CPUProfile(ctx, admin, window, f)
	return errors.Join(err, f.Close())
}

// profileSelf starts a CPU profile of this process; stop ends it.
func profileSelf(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeJSON writes every outcome to path.
func writeJSON(path string, all []outcome) error {
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// quietLogger drops the clients' logs: problems are counted instead.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
