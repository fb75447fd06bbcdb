package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// selfProfiler takes CPU profiles of the generator itself, one file per
// phase of the run: the measured window (or the idle hold) for
// --cpuprofile, the subscribers' ramp for --connect-cpuprofile. The
// generator shares the machine with the edge, so what it spends per
// delivery and per connection is taken from the edge.
type selfProfiler struct {
	paths map[loadgen.Phase]string // the file of each profiled phase
	errw  io.Writer                // where failures are said

	// cur is the profile being written, nil when none. Only the run's
	// goroutine (through OnPhase) and then stop use it, one after the
	// other.
	cur *os.File
}

// newSelfProfiler returns the profiler of the flags; nil when no profile
// is asked for.
func newSelfProfiler(window, connect string, errw io.Writer) *selfProfiler {
	p := &selfProfiler{paths: map[loadgen.Phase]string{}, errw: errw}
	if window != "" {
		p.paths[loadgen.PhaseMeasure] = window
		p.paths[loadgen.PhaseHold] = window
	}
	if connect != "" {
		p.paths[loadgen.PhaseConnect] = connect
	}
	if len(p.paths) == 0 {
		return nil
	}
	return p
}

// phase ends the profile of the previous phase and starts this one's;
// it is loadgen.Options.OnPhase.
func (p *selfProfiler) phase(ph loadgen.Phase) {
	p.stop()
	path, ok := p.paths[ph]
	if !ok {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		p.fail(err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		p.fail(errors.Join(err, f.Close()))
		return
	}
	p.cur = f
}

// stop ends the profile being written, if any.
func (p *selfProfiler) stop() {
	if p.cur == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := p.cur.Close(); err != nil {
		p.fail(err)
	}
	p.cur = nil
}

func (p *selfProfiler) fail(err error) {
	fmt.Fprintf(p.errw, "sluice bench: generator profile: %v\n", err)
}
