package e2e

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/chaos"
	"github.com/sluicehq/sluice/internal/poll"
)

// drain waits until every subscription still open has delivered every
// acknowledged message of its channel (after a kill, an edge's feed may
// take tens of seconds to come back: afterFault). What never comes, the
// check reports as missing.
func drain(t *testing.T, h *chaos.History) {
	last := map[string]uint64{}
	var open []*chaos.Sub
	h.Do(func() {
		for _, m := range h.Msgs {
			if m.Outcome == chaos.Acked {
				last[m.Channel] = max(last[m.Channel], m.Off)
			}
		}
		for _, s := range h.Subs {
			if s.End == chaos.Open && s.Err == "" && !s.Replied.IsZero() {
				open = append(open, s)
			}
		}
	})
	behind := 0
	done := poll.Wait(afterFault, func() bool {
		h.Do(func() {
			open = slices.DeleteFunc(open, func(s *chaos.Sub) bool {
				return s.End != chaos.Open || s.Start > last[s.Channel] || resumeFrom(s) > last[s.Channel]
			})
			behind = len(open)
		})
		return behind == 0
	})
	if !done {
		t.Logf("%d subscriptions still behind after %v", behind, afterFault)
	}
}

// byKind counts vs by kind, known bugs apart.
func byKind(vs []chaos.Violation) []string {
	kinds := map[string]int{}
	for _, v := range vs {
		k := v.Kind
		if v.Known != "" {
			k += " [known: " + v.Known + "]"
		}
		kinds[k]++
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		out = append(out, fmt.Sprintf("%6d × %s", kinds[k], k))
	}
	return out
}

// violationSummary counts vs by kind and lists the first few.
func violationSummary(seed uint64, vs []chaos.Violation) []string {
	var out []string
	for _, k := range byKind(vs) {
		out = append(out, fmt.Sprintf("seed %d: %s", seed, k))
	}
	for i, v := range vs {
		if i == 20 {
			out = append(out, fmt.Sprintf("seed %d: ... and %d more (see the operation log)", seed, len(vs)-20))
			break
		}
		out = append(out, fmt.Sprintf("seed %d: %s", seed, v))
	}
	return out
}

// reportViolations writes the run's operation log and the edges' logs
// to files, and says where.
func reportViolations(t *testing.T, cs chaosSettings, seed uint64, h *chaos.History, vs []chaos.Violation, c *chaosCluster) {
	path, err := writeOpLog(cs.logDir, seed, h, vs)
	if err != nil {
		t.Logf("writing the operation log: %v", err)
		return
	}
	for i, p := range c.all {
		name := fmt.Sprintf("%s.edge%d-%d.log", path, c.edgeOf[i], i)
		if err := os.WriteFile(name, []byte(p.stderr.String()), 0o644); err != nil {
			t.Logf("writing an edge's log: %v", err)
		}
	}
	t.Logf("seed %d: %d violations; operation log in %s (edges' logs beside it); replay with SLUICE_CHAOS_SEED=%d CHAOS_PARTITIONS=N make chaos (N: the subtest's partitions)", seed, len(vs), path, seed)
}

// writeOpLog writes the violations and h's operation log to dir (the temporary directory
// if ""), where it stays after the test.
func writeOpLog(dir string, seed uint64, h *chaos.History, vs []chaos.Violation) (string, error) {
	f, err := os.CreateTemp(dir, fmt.Sprintf("sluice-chaos-%d-%s-*.log", seed, time.Now().Format("150405")))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b := bufio.NewWriter(f)
	fmt.Fprintf(b, "seed %d: %d violations\n", seed, len(vs))
	for _, v := range vs {
		fmt.Fprintln(b, v)
	}
	fmt.Fprintln(b, "\noperation log (seconds since the run began):")
	chaos.Dump(h, b)
	if err := b.Flush(); err != nil {
		return "", err
	}
	return f.Name(), nil
}
