package e2e

// cluster.sync for real: strace (-e trace=fsync) attached to a durable
// edge shows whether JetStream fsynced the stream's file between a
// publish's send and its acknowledgment. Needs strace (`make test`
// installs it); without it the test fails, saying so.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// syncedPublishes is how many publishes, one at a time, each test makes.
const syncedPublishes = 40

// TestSyncAlwaysAcksAfterFsync: with cluster.sync: always, every
// acknowledged publish had the stream's message block fsynced after it
// was sent and before its acknowledgment came (strace's stamp of the
// fsync's entry lies between the two, on the same clock); with an
// interval of 2m, publishes are acknowledged without one (which shows
// that the check can fail).
func TestSyncAlwaysAcksAfterFsync(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("this test traces the edge's fsyncs: `make test` installs strace, or apt-get install strace")
	}
	for _, sync := range []string{"always", "2m"} {
		t.Run("sync="+sync, func(t *testing.T) {
			t.Parallel()
			windows, fsyncs := tracePublishes(t, sync)
			covered := 0
			for _, w := range windows {
				for _, f := range fsyncs {
					if f > w[0] && f < w[1] {
						covered++
						break
					}
				}
			}
			switch {
			case sync == "always" && covered != len(windows):
				t.Fatalf("sync always: %d of %d acknowledgments followed an fsync of the stream's block (%d fsyncs traced)", covered, len(windows), len(fsyncs))
			case sync != "always" && covered == len(windows):
				t.Fatalf("sync %s: every one of %d acknowledgments followed an fsync: the trace cannot tell the settings apart", sync, covered)
			}
			t.Logf("sync %s: %d of %d acknowledgments followed an fsync of the stream's block; %d fsyncs", sync, covered, len(windows), len(fsyncs))
		})
	}
}

// tracePublishes starts a durable edge with cluster.sync set to sync,
// attaches strace to it, publishes one message at a time and returns
// each publish's window (sent, acknowledged; Unix µs) and the times of
// the fsyncs of the stream's message blocks.
func tracePublishes(t *testing.T, sync string) (windows [][2]int64, fsyncs []int64) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "edge.yaml")
	if err := os.WriteFile(cfg, []byte("cluster:\n  data_dir: "+filepath.Join(dir, "data")+"\n  sync: "+sync+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startEdgeProcess(t, "--config", cfg)
	out := filepath.Join(dir, "strace.txt")
	st := startCommand(t, nil, "strace", "-f", "-ttt", "-y", "-e", "trace=fsync,fdatasync", "-o", out,
		"-p", strconv.Itoa(e.cmd.Process.Pid))
	// strace says so on stderr once it has attached to every thread.
	poll.Until(t, "strace to attach", func() bool { return strings.Contains(st.stderr.String(), "attached") })
	pub := dial(t, e.url, client.Options{AppKey: e.appkey})
	for i := range syncedPublishes {
		sent := time.Now().UnixMicro()
		if _, err := pub.Publish(ctxFor(t), "durable", i); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		windows = append(windows, [2]int64{sent, time.Now().UnixMicro()})
	}
	// SIGINT detaches strace from the edge and ends it, its file written.
	st.signal(t, syscall.SIGINT)
	poll.Recv(t, "strace to exit", st.done)
	return windows, blockFsyncs(t, out)
}

// fsyncLine is an fsync in strace -f -ttt -y's output: the thread, the
// time of the call's entry, the file synced.
var fsyncLine = regexp.MustCompile(`^\d+\s+(\d+)\.(\d{6}) f(?:data)?sync\(\d+<([^>]*)>`)

// blockFsyncs returns the times (Unix µs) of the fsyncs of the SLUICE
// stream's message blocks in the strace output at path.
func blockFsyncs(t *testing.T, path string) []int64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var times []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := fsyncLine.FindStringSubmatch(sc.Text())
		if m == nil || !strings.Contains(m[3], "/streams/SLUICE/msgs/") || !strings.HasSuffix(m[3], ".blk") {
			continue
		}
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		usec, _ := strconv.ParseInt(m[2], 10, 64)
		times = append(times, sec*1e6+usec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return times
}
