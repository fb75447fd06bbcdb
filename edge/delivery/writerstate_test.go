package delivery

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Each move of the writer's state, from each state: what it reports and
// where it leaves the state.
func TestWriterStateMoves(t *testing.T) {
	type move struct {
		name string
		do   func(w *writerState) bool // reports the move's answer (true for moves without one)
	}
	var (
		wake = move{"wake", (*writerState).wake}
		take = move{"take", (*writerState).take}
		look = move{"look", func(w *writerState) bool { w.look(); return true }}
		rest = move{"rest", (*writerState).rest}
		stop = move{"stop", func(w *writerState) bool { w.stop(); return true }}
	)
	tests := []struct {
		name  string
		moves []move
		want  []bool // each move's answer
		end   int32
	}{
		{"a wake takes an idle writer", []move{wake}, []bool{true}, writerRunning},
		{"a wake asks a held writer for another pass", []move{wake, wake}, []bool{true, false}, writerAgain},
		{"wakes while asked add nothing", []move{wake, wake, wake}, []bool{true, false, false}, writerAgain},
		{"the reader takes an idle writer", []move{take}, []bool{true}, writerRunning},
		{"the reader does not take a held one", []move{take, take}, []bool{true, false}, writerRunning},
		{"nor one asked for another pass", []move{take, wake, take}, []bool{true, false, false}, writerAgain},
		{"a pass without a wake rests", []move{take, look, rest}, []bool{true, true, true}, writerIdle},
		{"a wake during a pass forbids rest", []move{take, look, wake, rest}, []bool{true, true, false, false}, writerAgain},
		{"the next pass takes the wake in", []move{take, look, wake, rest, look, rest}, []bool{true, true, false, false, true, true}, writerIdle},
		{"a wake after rest takes the writer again", []move{take, look, rest, wake}, []bool{true, true, true, true}, writerRunning},
		{"a stopped writer is never taken", []move{take, stop, wake, take}, []bool{true, true, false, false}, writerStopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWriterState()
			for i, m := range tt.moves {
				if got := m.do(&w); got != tt.want[i] {
					t.Fatalf("move %d (%s) answered %v, want %v", i, m.name, got, tt.want[i])
				}
			}
			if got := w.state.Load(); got != tt.end {
				t.Fatalf("state %d after the moves, want %d", got, tt.end)
			}
			select {
			case <-w.stopped():
				if tt.end != writerStopped {
					t.Fatal("stopped() closed, but the writer was not stopped")
				}
			default:
				if tt.end == writerStopped {
					t.Fatal("stopped() still open after stop")
				}
			}
		})
	}
}

// Under concurrent wakes, at most one goroutine holds the writer at a
// time, and no work a wake announced is left when the writer goes idle.
func TestWriterStateOneHolderNoLostWake(t *testing.T) {
	w := newWriterState()
	var holders, most atomic.Int32 // most: the most holders seen at once
	var work atomic.Int64          // announced and not yet taken by a pass
	var taken atomic.Int64
	hold := func() {
		n := holders.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
	}
	pass := func() {
		// The holder's passes, as writePass and directPass make them. It
		// counts itself out before rest, which lets the writer go: a
		// failed rest keeps it, and it counts itself in again.
		hold()
		for {
			w.look()
			taken.Add(work.Swap(0))
			holders.Add(-1)
			if w.rest() {
				return
			}
			hold()
		}
	}
	const wakers, each = 4, 2000
	var wg sync.WaitGroup
	for range wakers {
		wg.Go(func() {
			for range each {
				work.Add(1)
				if w.wake() {
					pass()
				}
			}
		})
	}
	wg.Wait()
	if got := most.Load(); got != 1 {
		t.Fatalf("%d goroutines held the writer at once, want 1", got)
	}
	if left := work.Load(); left != 0 || taken.Load() != wakers*each {
		t.Fatalf("the writer went idle with %d units of work left (%d taken of %d)", left, taken.Load(), wakers*each)
	}
}
