package edgecmd

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The edge's soft memory limit (the Go runtime's, GOMEMLIMIT): without
// one the garbage collector lets the heap grow to twice what is live,
// and an edge replaying history to hundreds of slow subscribers went
// from 188 MB to about 1 GB of RSS with 225 MB live. With one, it
// collects harder as the heap nears the limit instead.

// cgroupMemoryFiles are where the memory limit of the cgroup the edge
// runs in may be read: cgroup v2, then v1.
var cgroupMemoryFiles = []string{
	"/sys/fs/cgroup/memory.max",
	"/sys/fs/cgroup/memory/memory.limit_in_bytes",
}

// cgroupPercent is the part of a cgroup's limit the heap may take: the
// rest is the runtime's own, the stacks and the kernel's socket buffers
// charged to the cgroup.
const cgroupPercent = 90

// memoryLimit returns the soft memory limit to set and where it comes
// from: limits.memory when configured; nothing when GOMEMLIMIT is set
// (the runtime took it at start); else a share of the cgroup's limit
// read by cgroupMax. from is "" when no limit is set.
func memoryLimit(configured Size, env string, cgroupMax func() (int64, bool)) (limit int64, from string) {
	switch {
	case configured > 0:
		return int64(configured), "limits.memory"
	case env != "" && env != "off":
		return 0, "" // the runtime applied it; SetMemoryLimit would undo nothing
	}
	if n, ok := cgroupMax(); ok {
		return n / 100 * cgroupPercent, "cgroup"
	}
	return 0, ""
}

// readCgroupMax reads the memory limit of the edge's cgroup, if any.
func readCgroupMax() (int64, bool) {
	for _, f := range cgroupMemoryFiles {
		if n, ok := parseCgroupMax(f); ok {
			return n, true
		}
	}
	return 0, false
}

// parseCgroupMax reads one cgroup memory limit file: "max" (v2) or a
// page-rounded huge number (v1) say there is none.
func parseCgroupMax(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0, false
	}
	return n, true
}

// applyMemoryLimit sets the process's soft memory limit as memoryLimit
// says, and logs the one in force. It is the process's, so only Run
// (the command) calls it, not Start (tests start several edges).
func (e *Edge) applyMemoryLimit(cfg *Config) {
	limit, from := memoryLimit(cfg.Limits.Memory, os.Getenv("GOMEMLIMIT"), readCgroupMax)
	if from != "" {
		debug.SetMemoryLimit(limit)
	}
	if cur := debug.SetMemoryLimit(-1); cur < 1<<62 {
		if from == "" {
			from = "GOMEMLIMIT"
		}
		e.log.Info("memory limit", "bytes", cur, "from", from)
		return
	}
	e.log.Info("no memory limit: set limits.memory (or GOMEMLIMIT) to make the garbage collector keep the edge under one")
}
