package e2e

// The cluster the chaos test breaks: three `sluice edge` processes on
// fixed ports, so that an edge killed and started again (same data
// directory, same flags) is where its clients left it, and the faults the
// schedule draws from.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/chaos"
	"github.com/sluicehq/sluice/internal/poll"
)

// chaosConfig is the edges' configuration: the chaos app lets anyone
// publish and subscribe, and keeps every message for the whole run (an
// hour, a million per channel), so that only purges expire positions.
const chaosConfig = `apps:
  - appkey: chaos
    roles:
      default:
        publish: ["*"]
        subscribe: ["*"]
    channels:
      - pattern: "*"
        ttl: 1h
        history:
          count: 1000000
limits:
  shutdown_timeout: 2s
`

// chaosCluster is n edges whose embedded NATS nodes form one JetStream
// cluster; the test goroutine alone starts and signals them.
type chaosCluster struct {
	t     *testing.T
	args  [][]string // each edge's flags, the same at every start
	procs []*process
	urls  []string // each edge's RTM endpoint, fixed
	// all is every process started, restarts included, and edgeOf the
	// edge each was: their logs go beside a failing seed's operation log.
	all    []*process
	edgeOf []int
}

func startChaosCluster(t *testing.T, n, partitions int) *chaosCluster {
	t.Helper()
	ports := journaltest.FreePorts(t, 2*n)
	cfg := edgecmdtest.WriteConfig(t, chaosConfig)
	c := &chaosCluster{t: t}
	for i := range n {
		c.args = append(c.args, append([]string{"--listen", fmt.Sprintf("127.0.0.1:%d", ports[n+i]), "--config", cfg},
			clusterFlags(t, "chaos", ports[:n], i, partitions)...))
		c.procs = append(c.procs, launchEdge(t, c.args[i]...))
		c.all, c.edgeOf = append(c.all, c.procs[i]), append(c.edgeOf, i)
	}
	for i, p := range c.procs {
		c.urls = append(c.urls, waitReady(t, p).url)
		if want := fmt.Sprintf("ws://127.0.0.1:%d", ports[n+i]); c.urls[i] != want {
			t.Fatalf("edge %d serves %s, want %s", i, c.urls[i], want)
		}
	}
	return c
}

// restart starts edge i again, as it was started first, and waits until
// it serves; an edge that exits instead is started again (as a service
// manager would), and each exit is recorded as a failure.
func (c *chaosCluster) restart(i int, h *chaos.History) {
	for try := 1; ; try++ {
		p := launchEdge(c.t, c.args[i]...)
		c.procs[i], c.all, c.edgeOf = p, append(c.all, p), append(c.edgeOf, i)
		ready := poll.Wait(time.Minute, func() bool {
			_, err := readyfile.Read(p.ready)
			return err == nil || p.exited()
		})
		if ready && !p.exited() {
			return
		}
		h.AddFailure(fmt.Sprintf("edge %d, started again after a fault (try %d), %s: %s", i, try,
			map[bool]string{true: "exited", false: "not ready within a minute"}[p.exited()], lastLine(p.stderr.String())))
		if try == 3 {
			c.t.Fatalf("edge %d would not start again", i)
		}
		p.kill()
	}
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// chaosFault is one kind of fault the schedule draws: inject breaks edge
// i, waits (a duration drawn from r) and mends it (recording in h what
// fails on the way), and says what it did. New kinds (a partition through network namespaces)
// are added to chaosFaults.
type chaosFault struct {
	name   string
	inject func(c *chaosCluster, i int, r *rand.Rand, h *chaos.History) string
}

var chaosFaults = []chaosFault{
	{"kill", killAndRestart},
	{"stop", stopAndContinue},
}

// faultsNamed returns the faults named in a comma-separated list (all
// for "").
func faultsNamed(t *testing.T, names string) []chaosFault {
	if names == "" {
		return chaosFaults
	}
	var out []chaosFault
	for _, n := range strings.Split(names, ",") {
		found := false
		for _, f := range chaosFaults {
			if f.name == n {
				out, found = append(out, f), true
			}
		}
		if !found {
			t.Fatalf("CHAOS_FAULTS: no fault %q", n)
		}
	}
	return out
}

// pause waits d, or less if stop closes.
func pause(d time.Duration, stop <-chan struct{}) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-stop:
	}
}

// between draws a duration in [lo, hi).
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// killAndRestart: SIGKILL, down for a while, then the same command again.
func killAndRestart(c *chaosCluster, i int, r *rand.Rand, h *chaos.History) string {
	down := between(r, 500*time.Millisecond, 3*time.Second)
	c.procs[i].kill()
	pause(down, nil)
	c.restart(i, h)
	return fmt.Sprintf("kill -9 of edge %d, restarted after %v", i, down.Round(time.Millisecond))
}

// stopAndContinue: SIGSTOP, frozen for a while, then SIGCONT.
func stopAndContinue(c *chaosCluster, i int, r *rand.Rand, _ *chaos.History) string {
	frozen := between(r, time.Second, 5*time.Second)
	c.procs[i].signal(c.t, syscall.SIGSTOP)
	pause(frozen, nil)
	c.procs[i].signal(c.t, syscall.SIGCONT)
	return fmt.Sprintf("SIGSTOP of edge %d, SIGCONT after %v", i, frozen.Round(time.Millisecond))
}
