package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Sample is a process's resource use at one moment.
type Sample struct {
	// RSS is the resident memory, in bytes.
	RSS int64
	// CPU is the user plus system CPU time used since the process started.
	CPU time.Duration
}

// Probe samples a process's resource use.
type Probe interface {
	// Sample returns the current use.
	Sample(ctx context.Context) (Sample, error)
	// Source says where the numbers come from, for the report.
	Source() string
}

// ErrNoProcess reports a process (or listener) that /proc does not show.
var ErrNoProcess = errors.New("loadgen: process not found")

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// ProcProbe reads a process's use from /proc on this host (Linux).
type ProcProbe struct{ PID int }

// Source implements Probe.
func (p ProcProbe) Source() string { return "/proc/" + strconv.Itoa(p.PID) }

// Sample implements Probe: VmRSS from /proc/PID/status, utime + stime from
// /proc/PID/stat.
func (p ProcProbe) Sample(context.Context) (Sample, error) {
	dir := filepath.Join("/proc", strconv.Itoa(p.PID))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Sample{}, fmt.Errorf("%w: %v", ErrNoProcess, err)
	}
	// The command name, in parentheses, may hold spaces: fields start
	// after the last ')'. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(fields) < 13 {
		return Sample{}, fmt.Errorf("loadgen: %s/stat: unexpected format", dir)
	}
	ut, err1 := strconv.ParseInt(fields[11], 10, 64)
	st, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return Sample{}, fmt.Errorf("loadgen: %s/stat: unexpected format", dir)
	}
	s := Sample{CPU: time.Duration(ut+st) * time.Second / clockTicks}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return Sample{}, fmt.Errorf("%w: %v", ErrNoProcess, err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return Sample{}, fmt.Errorf("loadgen: %s/status: VmRSS %q", dir, v)
			}
			s.RSS = kb << 10
		}
	}
	return s, nil
}

// FindListener returns the process listening on a TCP port of this host,
// from /proc/net/tcp{,6} and the processes' open sockets; it needs to see
// that process's /proc/PID/fd (same user, or root).
func FindListener(port int) (int, error) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listeningInodes(f, port, inodes); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("%w: nothing listens on port %d", ErrNoProcess, port)
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoProcess, err)
	}
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if ownsSocket(pid, inodes) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("%w: no visible process holds the listener on port %d", ErrNoProcess, port)
}

// listeningInodes adds the socket inodes listening on port found in one
// /proc/net/tcp file.
func listeningInodes(path string, port int, into map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && strings.HasSuffix(fs[1], want) && fs[3] == "0A" { // 0A: LISTEN
			into[fs[9]] = true
		}
	}
	return sc.Err()
}

// ownsSocket reports whether pid has one of the socket inodes open.
func ownsSocket(pid int, inodes map[string]bool) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		if in, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(in, "]")] {
			return true
		}
	}
	return false
}

// MetricsProbe reads a process's use from its Prometheus endpoint: the
// standard process_resident_memory_bytes and process_cpu_seconds_total,
// which Sluice's /metrics and Centrifugo's both export.
type MetricsProbe struct {
	// URL is the metrics endpoint, as in "http://127.0.0.1:8080/metrics".
	URL string
	// Client makes the requests; nil means a client with a 5s timeout.
	Client *http.Client
}

// Source implements Probe.
func (p MetricsProbe) Source() string { return p.URL }

// Sample implements Probe.
func (p MetricsProbe) Sample(ctx context.Context) (Sample, error) {
	m, err := p.Scrape(ctx)
	if err != nil {
		return Sample{}, err
	}
	rss, ok1 := m["process_resident_memory_bytes"]
	cpu, ok2 := m["process_cpu_seconds_total"]
	if !ok1 || !ok2 {
		return Sample{}, fmt.Errorf("loadgen: %s has no process_resident_memory_bytes or process_cpu_seconds_total", p.URL)
	}
	return Sample{RSS: int64(rss), CPU: time.Duration(cpu * float64(time.Second))}, nil
}

// Scrape returns the unlabelled samples of the metrics endpoint by name.
func (p MetricsProbe) Scrape(ctx context.Context) (map[string]float64, error) {
	hc := p.Client
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("loadgen: metrics: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("loadgen: metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("loadgen: metrics %s: HTTP %s", p.URL, resp.Status)
	}
	return parseMetrics(io.LimitReader(resp.Body, 16<<20))
}

// parseMetrics reads Prometheus' text format, keeping samples without
// labels.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	m := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || strings.ContainsRune(line, '{') {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		val, _, _ = strings.Cut(strings.TrimSpace(val), " ") // drop a timestamp
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			m[name] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("loadgen: metrics: %w", err)
	}
	return m, nil
}

// CPUProfile takes a CPU profile of a Go server for d from its
// net/http/pprof handler under base (as in "http://127.0.0.1:9090") and
// copies it to w, for `go tool pprof`. Cancelling ctx does not cut the
// profile short: the server decides when it ends.
func CPUProfile(ctx context.Context, base string, d time.Duration, w io.Writer) error {
	secs := max(int(d/time.Second), 1)
	u := strings.TrimSuffix(base, "/") + "/debug/pprof/profile?seconds=" + strconv.Itoa(secs)
	// The answer comes once the profile is done; give it some time past d.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d+10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("loadgen: profile: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("loadgen: profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("loadgen: profile %s: HTTP %s", u, resp.Status)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("loadgen: profile: %w", err)
	}
	return nil
}
