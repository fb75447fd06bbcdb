package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machine is what the generated files say of the machine a run measured
// on: read from /proc, since figures of different machines (or of the
// same VM on another host CPU) do not compare.
type machine struct {
	CPU    string `json:"cpu"`  // the model name of /proc/cpuinfo
	CPUs   int    `json:"cpus"` // its processors
	Memory int64  `json:"memory_bytes"`
	Kernel string `json:"kernel"`
	// Go is the toolchain of this tool, which built Sluice and the floor
	// too.
	Go string `json:"go"`
}

// readMachine reads the machine's description under proc (/proc);
// what cannot be read is left empty, or runtime's.
func readMachine(proc string) machine {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile(filepath.Join(proc, "cpuinfo")); err == nil {
		n := 0
		for line := range strings.Lines(string(b)) {
			key, value, ok := strings.Cut(line, ":")
			switch key = strings.TrimSpace(key); {
			case !ok:
			case key == "processor":
				n++
			case key == "model name" && m.CPU == "":
				m.CPU = strings.TrimSpace(value)
			}
		}
		if n > 0 {
			m.CPUs = n
		}
	}
	if b, err := os.ReadFile(filepath.Join(proc, "meminfo")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					m.Memory = kb * 1024
				}
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(proc, "sys", "kernel", "osrelease")); err == nil {
		m.Kernel = runtime.GOOS + " " + strings.TrimSpace(string(b))
	}
	return m
}

// String is the machine in one line, as the generated files give it.
func (m machine) String() string {
	cpu := m.CPU
	if cpu == "" {
		cpu = "CPU model unknown"
	}
	mem := "memory unknown"
	if m.Memory > 0 {
		mem = fmt.Sprintf("%.1f GiB memory", float64(m.Memory)/(1<<30))
	}
	kernel := m.Kernel
	if kernel == "" {
		kernel = runtime.GOOS
	}
	return fmt.Sprintf("%d x %s, %s, %s", m.CPUs, cpu, mem, kernel)
}

// loadAverage is the 1-, 5- and 15-minute load averages of
// proc/loadavg, as written there; "" when it cannot be read.
func loadAverage(proc string) string {
	b, err := os.ReadFile(filepath.Join(proc, "loadavg"))
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// sluiceVersion says which Sluice ran: the commit of the tree it was
// built from (and whether that tree had uncommitted changes), or the
// binary given instead.
func sluiceVersion(ctx context.Context, repo, givenBin string) string {
	if givenBin != "" {
		return "the binary " + givenBin
	}
	head, err := output(ctx, "git", "-C", repo, "rev-parse", "--short=12", "HEAD")
	if err != nil {
		return "built from " + repo + " (its commit unknown: " + err.Error() + ")"
	}
	v := "built from commit " + head
	switch dirty, err := output(ctx, "git", "-C", repo, "status", "--porcelain", "--untracked-files=no"); {
	case err != nil:
		v += " (uncommitted changes unknown: " + err.Error() + ")"
	case dirty != "":
		v += " with uncommitted changes"
	}
	return v
}

// centrifugoVersion is the module and version the Centrifugo binary was
// built from (a `go install` build says v0.0.0 to its own version
// command: its release builds set that by a linker flag), else what that
// command says, else the module this tool would have built.
func centrifugoVersion(ctx context.Context, bin string) string {
	if bi, err := buildinfo.ReadFile(bin); err == nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return fmt.Sprintf("%s %s, built with %s", bi.Main.Path, bi.Main.Version, bi.GoVersion)
	}
	if v, err := output(ctx, bin, "version"); err == nil && v != "" {
		first, _, _ := strings.Cut(v, "\n")
		return first
	}
	return centrifugoModule + " (not read from the binary)"
}

// output runs a short command and returns its trimmed output.
func output(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}
