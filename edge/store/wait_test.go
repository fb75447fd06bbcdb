package store

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// countWaker counts its wakes.
type countWaker struct{ n atomic.Int64 }

func (w *countWaker) Wake() { w.n.Add(1) }

func TestWaitCoalesces(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, &Options{BlockBytes: 256})
	var ws [3]countWaker
	var cs [3]*Cursor
	for i := range cs {
		cs[i] = mustSubscribe(t, s, "c", Start{})
		if !cs[i].Wait(&ws[i]) {
			t.Fatalf("cursor %d: Wait on an empty channel did not arm", i)
		}
	}
	for i := range 100 { // spans several blocks
		mustAppend(t, s, "c", payload(i, 16))
	}
	settle(t, s, "c")
	for i := range ws {
		if n := ws[i].n.Load(); n != 1 {
			t.Fatalf("cursor %d woken %d times by 100 appends, want 1", i, n)
		}
	}
	// Cursor 0 reads and re-arms; the others have not read: only it wakes.
	if got := offsets(t, cs[0]); len(got) != 100 {
		t.Fatalf("read %d frames, want 100", len(got))
	}
	if !cs[0].Wait(&ws[0]) {
		t.Fatal("Wait after reading everything did not arm")
	}
	if cs[1].Wait(&ws[1]) {
		t.Fatal("Wait with frames ready armed")
	}
	mustAppend(t, s, "c", []byte("x"))
	settle(t, s, "c")
	if a, b := ws[0].n.Load(), ws[1].n.Load(); a != 2 || b != 1 {
		t.Fatalf("wakes = %d, %d; want 2 for the re-armed cursor, 1 for the other", a, b)
	}
	// A closed cursor is never woken.
	if got := offsets(t, cs[2]); len(got) != 101 {
		t.Fatalf("read %d frames, want 101", len(got))
	}
	cs[2].Wait(&ws[2])
	cs[2].Close()
	mustAppend(t, s, "c", []byte("y"))
	settle(t, s, "c")
	if n := ws[2].n.Load(); n != 1 {
		t.Fatalf("closed cursor woken: %d wakes", n)
	}
}

// TestWaitSeesSealedBlock: a cursor at the end of a sealed block has the
// next block ready.
func TestWaitSeesSealedBlock(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 2)
	s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb})
	c := mustSubscribe(t, s, "c", Start{})
	mustAppend(t, s, "c", payload(0, 4))
	mustAppend(t, s, "c", payload(1, 4))
	if got := offsets(t, c); len(got) != 2 {
		t.Fatalf("read %v", got)
	}
	mustAppend(t, s, "c", payload(2, 4)) // a new block
	var w countWaker
	if c.Wait(&w) {
		t.Fatal("Wait armed with a frame ready in the next block")
	}
	if got := offsets(t, c); !equalOffsets(got, []uint64{3}) {
		t.Fatalf("read %v, want 3", got)
	}
}

// TestWakeBeforeOutOfSync: a cursor only goes out of sync by losing
// messages committed past it, and the first of those woke it.
func TestWakeBeforeOutOfSync(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 2)
	// A replica, where a start past the next offset waits for it (a
	// standalone store refuses it).
	s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb, ChannelBytes: int64(2 * bb), Epoch: 7})
	e := s.Next("c").Epoch
	c := mustSubscribe(t, s, "c", Start{Position: pos(e, 3)}) // wants 3 and later
	var w countWaker
	if !c.Wait(&w) {
		t.Fatal("Wait did not arm")
	}
	mustAppend(t, s, "c", payload(0, 4))
	settle(t, s, "c")
	if w.n.Load() != 1 {
		t.Fatalf("wakes = %d, want 1", w.n.Load())
	}
	if got := offsets(t, c); got != nil {
		t.Fatalf("read %v before its start", got)
	}
	if !c.Wait(&w) {
		t.Fatal("Wait did not arm after skipping what it does not want")
	}
	for i := 1; i < 7; i++ { // 3..4 are evicted before c reads them
		mustAppend(t, s, "c", payload(i, 4))
	}
	settle(t, s, "c")
	if w.n.Load() != 2 {
		t.Fatalf("wakes = %d, want 2", w.n.Load())
	}
	_, err := c.Read(nil, 0)
	if oos := oosError(t, err); oos.Missed != 2 || oos.Head.Offset != 5 {
		t.Fatalf("out of sync %+v, want 2 missed, head 5", *oos)
	}
	if c.Wait(&w) {
		t.Fatal("Wait armed on an out-of-sync cursor")
	}
	if missed, p := c.FastForward(); missed != 2 || p.Offset != 5 {
		t.Fatalf("FastForward = %d, %v", missed, p)
	}
	if got := offsets(t, c); !equalOffsets(got, seq(5, 7)) {
		t.Fatalf("read %v, want 5..7", got)
	}
}

// TestHotPathsDoNotAllocate: append, wake (by the notifier), wait and read
// in steady state.
func TestHotPathsDoNotAllocate(t *testing.T) {
	s, _ := newTestStore(t, &Options{FirstBlockBytes: 64 << 10})
	c := mustSubscribe(t, s, "c", Start{})
	w := newWaker()
	data := []byte("hello")
	dst := make([]Frame, 0, 16)
	mustAppend(t, s, "c", data)
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		if dst, err = c.Read(dst[:0], 0); err != nil || len(dst) != 1 {
			t.Fatalf("read %d, %v", len(dst), err)
		}
		if !c.Wait(w) {
			t.Fatal("not armed")
		}
		if _, err = s.Append("c", data); err != nil {
			t.Fatalf("append: %v", err)
		}
		awaitWake(t, w, timeout)
		_, _, _ = s.Read("c", nil)
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per append+wake+wait+read, want 0", allocs)
	}
}

// TestReadFramesOrErrorNeverBoth: when a deletion races a Read that already
// took frames, Read returns those frames and reports the loss next time, so
// a caller that drops frames on error loses nothing silently.
func TestReadFramesOrErrorNeverBoth(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 2)
	s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb})
	c := mustSubscribe(t, s, "c", Start{})
	for i := range 4 {
		mustAppend(t, s, "c", payload(i, 4))
	}
	// Simulate the second block being deleted while the cursor reads the
	// first (the sweeper deletes oldest first, so only a race shows this).
	s.lookup("c").q.Load().blocks[1].deleted.Store(true)
	fs, err := c.Read(nil, 0)
	if err != nil || len(fs) != 2 {
		t.Fatalf("Read = %d frames, %v; want the 2 before the loss and no error", len(fs), err)
	}
	if _, err := c.Read(nil, 0); !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("next Read: %v, want out of sync", err)
	}
}

// TestChannelLayout: the channel struct keeps its cache-line layout, so
// that readers arming (the wait list) and the notifier do not invalidate
// the line of the fields every append writes.
func TestChannelLayout(t *testing.T) {
	t.Parallel()
	var ch channel
	for _, tt := range []struct {
		name      string
		got, want uintptr
	}{
		{"size (a size class aligned to lines)", unsafe.Sizeof(ch), 256},
		{"immutable fields on the second line", unsafe.Offsetof(ch.name), 64},
		{"writer's fields on the third line", unsafe.Offsetof(ch.mu), 128},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}
