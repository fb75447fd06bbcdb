package store

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// noHistory is a retention without the history hold.
func noHistory(ttl, grace time.Duration) func(string) Retention {
	return func(string) Retention { return Retention{TTL: ttl, Grace: grace, HistoryCount: -1} }
}

// TestGracePeriod: once a block is old, new reads and subscriptions there
// get ErrExpired while a cursor already inside finishes it; at T2 the block
// is deleted and a cursor that had not read it is out of sync by exactly
// what it missed.
func TestGracePeriod(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{
		BlockBytes: frameOf(4, 4), FirstBlockBytes: frameOf(4, 4),
		Retention: noHistory(60*time.Second, 10*time.Second),
	})
	t0 := clk.Now()
	for i := range 4 { // block A: 1..4 at t0
		mustAppend(t, s, "c", payload(i, 4))
	}
	clk.Advance(30 * time.Second)
	for i := 4; i < 8; i++ { // block B: 5..8 at t0+30s
		mustAppend(t, s, "c", payload(i, 4))
	}
	e := s.Next("c").Epoch
	reader := mustSubscribe(t, s, "c", Start{Position: pos(e, 1)})
	idle := mustSubscribe(t, s, "c", Start{Position: pos(e, 2)})
	if got := offsets1(t, reader, 8); !equalOffsets(got, seq(1, 2)) {
		t.Fatalf("reader read %v, want 1..2", got)
	}

	clk.Advance(31 * time.Second) // t0+61s: A is old
	s.Sweep()
	for _, p := range []uint64{1, 4} {
		if _, _, err := s.Read("c", pos(e, p)); !errors.Is(err, ErrExpired) {
			t.Fatalf("Read(%d) in an old block: err = %v, want ErrExpired", p, err)
		}
		if _, err := s.Subscribe("c", Start{Position: pos(e, p)}); !errors.Is(err, ErrExpired) {
			t.Fatalf("Subscribe(%d) in an old block: err = %v, want ErrExpired", p, err)
		}
	}
	if f, ok, err := s.Read("c", pos(e, 5)); err != nil || !ok || f.Offset != 5 {
		t.Fatalf("Read(5) at the head = %d, %v, %v", f.Offset, ok, err)
	}
	if c := mustSubscribe(t, s, "c", Start{HistoryCount: 100}); c.Position().Offset != 5 {
		t.Fatalf("history subscription starts at %v, want the head 5", c.Position())
	}
	if got := offsets1(t, reader, 8); !equalOffsets(got, seq(3, 4)) {
		t.Fatalf("reader inside the old block read %v, want 3..4", got)
	}

	clk.Advance(t0.Add(70 * time.Second).Sub(clk.Now())) // exactly T2 = A's time: kept
	s.Sweep()
	if got := offsets(t, idle); !equalOffsets(got, seq(2, 8)) {
		t.Fatalf("idle cursor at T2 read %v, want 2..8", got)
	}
}

// TestDeletedAfterT2: past T2 the old block is deleted and a cursor still
// inside it is out of sync by exactly the messages it had not read, until
// it fast-forwards to the head.
func TestDeletedAfterT2(t *testing.T) {
	t.Parallel()
	s2, clk2 := newTestStore(t, &Options{
		BlockBytes: frameOf(4, 4), FirstBlockBytes: frameOf(4, 4),
		Retention: noHistory(60*time.Second, 10*time.Second),
	})
	for i := range 4 {
		mustAppend(t, s2, "c", payload(i, 4))
	}
	clk2.Advance(30 * time.Second)
	for i := 4; i < 8; i++ {
		mustAppend(t, s2, "c", payload(i, 4))
	}
	e2 := s2.Next("c").Epoch
	behind := mustSubscribe(t, s2, "c", Start{Position: pos(e2, 2)})
	if got := offsets1(t, behind, 4); !equalOffsets(got, []uint64{2}) {
		t.Fatalf("read %v, want 2", got)
	}
	clk2.Advance(40*time.Second + 1) // t0+70s+1ns: past T2
	s2.Sweep()
	_, err := behind.Read(nil, 0)
	oos := oosError(t, err)
	want := OutOfSyncError{Missed: 2, Position: rtm.Position{Epoch: e2, Offset: 3}, Head: rtm.Position{Epoch: e2, Offset: 5}}
	if *oos != want {
		t.Fatalf("out of sync = %+v, want %+v", *oos, want)
	}
	if msg := oos.Error(); msg != "store: cursor out of sync at "+want.Position.String()+": 2 messages missed, head at "+want.Head.String() {
		t.Fatalf("Error() = %q", msg)
	}
	if _, err := behind.Read(nil, 0); !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("second Read: %v, want it still out of sync", err)
	}
	if st := s2.Stats(); st.OutOfSync != 1 || st.ExpiredBlocks != 1 {
		t.Fatalf("stats = %+v, want 1 out of sync, 1 expired block", st)
	}
	missed, p := behind.FastForward()
	if missed != 2 || p.Offset != 5 {
		t.Fatalf("FastForward = %d, %v, want 2, 5", missed, p)
	}
	if got := offsets(t, behind); !equalOffsets(got, seq(5, 8)) {
		t.Fatalf("after FastForward read %v, want 5..8", got)
	}
}

// offsets1 reads what fits in maxBytes.
func offsets1(t *testing.T, c *Cursor, maxBytes int) []uint64 {
	t.Helper()
	fs, err := c.Read(nil, maxBytes)
	if err != nil {
		t.Fatalf("Cursor.Read: %v", err)
	}
	var out []uint64
	for _, f := range fs {
		out = append(out, f.Offset)
	}
	return out
}

// TestMissedCountsMessagesNotOffsets: offsets skip, so the missed count
// comes from frame counts, across deleted and old blocks up to the head.
func TestMissedCountsMessagesNotOffsets(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{
		BlockBytes: frameOf(4, 4), FirstBlockBytes: frameOf(4, 4),
		Retention: noHistory(10*time.Second, 10*time.Second),
	})
	t0 := clk.Now()
	appendAt := func(off uint64, at time.Duration) {
		t.Helper()
		if _, err := s.AppendAt("c", off, t0.Add(at), payload(int(off), 4)); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []uint64{10, 20, 30, 40} { // A at t0
		appendAt(o, 0)
	}
	for _, o := range []uint64{50, 60, 70, 80} { // B at t0+5s
		appendAt(o, 5*time.Second)
	}
	appendAt(90, 20*time.Second) // C at t0+20s
	e := s.Next("c").Epoch
	c := mustSubscribe(t, s, "c", Start{Position: pos(e, 20)})
	clk.Advance(21 * time.Second) // T1 = t0+11s: A, B old; T2 = t0+1s: A deleted
	s.Sweep()
	_, err := c.Read(nil, 0)
	if oos := oosError(t, err); oos.Missed != 7 || oos.Head.Offset != 90 || oos.Position.Offset != 20 {
		t.Fatalf("out of sync = %+v, want 7 missed (20..80), head 90", *oos)
	}
	if missed, p := c.FastForward(); missed != 7 || p.Offset != 90 {
		t.Fatalf("FastForward = %d, %v", missed, p)
	}
	if got := offsets(t, c); !equalOffsets(got, []uint64{90}) {
		t.Fatalf("read %v, want 90", got)
	}
}

// TestFastForwardFromOldBlock: a cursor finishing an old block may give up
// on it and jump to the head.
func TestFastForwardFromOldBlock(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{
		BlockBytes: frameOf(4, 2), FirstBlockBytes: frameOf(4, 2),
		Retention: noHistory(10*time.Second, 10*time.Second),
	})
	mustAppend(t, s, "c", payload(0, 4))
	mustAppend(t, s, "c", payload(1, 4))
	clk.Advance(5 * time.Second)
	mustAppend(t, s, "c", payload(2, 4))
	c := mustSubscribe(t, s, "c", Start{HistoryCount: 3})
	ahead := mustSubscribe(t, s, "c", Start{HistoryCount: 1})
	clk.Advance(6 * time.Second)
	s.Sweep()
	if missed, p := ahead.FastForward(); missed != 0 || p.Offset != 3 {
		t.Fatalf("FastForward at the head = %d, %v, want 0, 3", missed, p)
	}
	if missed, p := c.FastForward(); missed != 2 || p.Offset != 3 {
		t.Fatalf("FastForward from the old block = %d, %v, want 2, 3", missed, p)
	}
	if got := offsets(t, c); !equalOffsets(got, []uint64{3}) {
		t.Fatalf("read %v, want 3", got)
	}
}

func TestHistoryRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		count    int
		readable []uint64 // after the TTL, within the age
	}{
		{name: "latest value", count: 1, readable: seq(5, 8)},
		{name: "five newest span two blocks", count: 5, readable: seq(1, 8)},
		{name: "disabled", count: -1, readable: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, clk := newTestStore(t, &Options{
				BlockBytes: frameOf(4, 4), FirstBlockBytes: frameOf(4, 4),
				Retention: func(string) Retention {
					return Retention{TTL: 10 * time.Second, Grace: time.Second, HistoryCount: tt.count, HistoryAge: time.Hour}
				},
			})
			for i := range 8 {
				mustAppend(t, s, "c", payload(i, 4))
			}
			e := s.Next("c").Epoch
			clk.Advance(20 * time.Second)
			s.Sweep()
			if got := readable(s, "c", e, 8); !equalOffsets(got, tt.readable) {
				t.Fatalf("readable past the TTL: %v, want %v", got, tt.readable)
			}
			if f, ok, _ := s.Read("c", nil); ok != (tt.readable != nil) || ok && f.Offset != 8 {
				t.Fatalf("newest = %d, %v", f.Offset, ok)
			}
			clk.Advance(time.Hour)
			s.Sweep()
			if got := readable(s, "c", e, 8); got != nil {
				t.Fatalf("readable past the age: %v, want none", got)
			}
			if st := s.Stats(); st.Blocks != 0 {
				t.Fatalf("blocks past the age: %d", st.Blocks)
			}
		})
	}
}

// TestHistoryHoldEndsWithNewMessage: a full block held only as the latest
// value expires as soon as a newer message exists elsewhere.
func TestHistoryHoldEndsWithNewMessage(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{
		BlockBytes: frameOf(4, 4), FirstBlockBytes: frameOf(4, 4),
		Retention: func(string) Retention {
			return Retention{TTL: 10 * time.Second, Grace: time.Second, HistoryCount: 1, HistoryAge: time.Hour}
		},
	})
	for i := range 4 {
		mustAppend(t, s, "c", payload(i, 4))
	}
	e := s.Next("c").Epoch
	clk.Advance(20 * time.Second)
	s.Sweep()
	if got := readable(s, "c", e, 4); !equalOffsets(got, seq(1, 4)) {
		t.Fatalf("held block: readable %v", got)
	}
	mustAppend(t, s, "c", payload(4, 4)) // opens a new block
	s.Sweep()
	if got := readable(s, "c", e, 5); !equalOffsets(got, []uint64{5}) {
		t.Fatalf("after a newer message: readable %v, want 5", got)
	}
}

// readable lists the offsets 1..last that Read finds exactly.
func readable(s *Store, ch string, epoch, last uint64) []uint64 {
	var out []uint64
	for o := uint64(1); o <= last; o++ {
		if f, ok, err := s.Read(ch, pos(epoch, o)); err == nil && ok && f.Offset == o {
			out = append(out, o)
		}
	}
	return out
}

func TestForgetAndNewEpoch(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{Retention: noHistory(10*time.Second, time.Second)})
	p1 := mustAppend(t, s, "c", []byte("a"))
	c := mustSubscribe(t, s, "c", Start{})
	clk.Advance(11*time.Second + 1)
	s.Sweep()
	if st := s.Stats(); st.Channels != 1 || st.Blocks != 0 {
		t.Fatalf("with a cursor open: %+v, want the channel kept without blocks", st)
	}
	if n := s.Next("c"); n != p1.Next() {
		t.Fatalf("Next = %v, want %v", n, p1.Next())
	}
	c.Close()
	s.Sweep()
	if st := s.Stats(); st.Channels != 0 || st.Appends != 1 {
		t.Fatalf("after Close: %+v, want the channel forgotten, 1 append counted", st)
	}
	if _, _, err := s.Read("c", &p1); !errors.Is(err, ErrExpired) {
		t.Fatalf("old position after forgetting: %v", err)
	}
	p2 := mustAppend(t, s, "c", []byte("b"))
	if p2.Epoch == p1.Epoch || p2.Offset != 1 {
		t.Fatalf("recreated channel position %v, want a new epoch than %v and offset 1", p2, p1)
	}
	if _, err := s.Subscribe("c", Start{Position: &p1}); !errors.Is(err, ErrExpired) {
		t.Fatalf("subscribe at the old epoch: %v", err)
	}
	// A channel made by Next alone is forgotten after TTL+Grace.
	n := s.Next("quiet")
	clk.Advance(11 * time.Second)
	s.Sweep()
	if n2 := s.Next("quiet"); n2 != n {
		t.Fatalf("quiet channel forgotten early: %v then %v", n, n2)
	}
	clk.Advance(11*time.Second + 1)
	s.Sweep()
	if s.lookup("quiet") != nil {
		t.Fatal("quiet channel not forgotten")
	}
}

// TestForgetRacesAppend: appends racing with sweeps that forget the
// channel must all land in live channels: every acknowledged append is
// counted, and epochs never come back.
func TestForgetRacesAppend(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{Retention: noHistory(time.Nanosecond, -1)})
	const n = 3000
	var acked atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	sweepUntil(&wg, s, clk, done)
	seen := map[uint64]bool{}
	var prev uint64
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < n || len(seen) < 20 && time.Now().Before(deadline); i++ {
		p, err := s.Append("c", []byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		acked.Add(1)
		if p.Epoch != prev {
			if seen[p.Epoch] {
				t.Fatalf("epoch %d came back", p.Epoch)
			}
			seen[p.Epoch], prev = true, p.Epoch
		}
		if i%3 == 0 {
			if c, err := s.Subscribe("c", Start{}); err == nil {
				c.Close()
			}
		}
	}
	close(done)
	wg.Wait()
	if st := s.Stats(); st.Appends != acked.Load() {
		t.Fatalf("appends counted %d, acknowledged %d", st.Appends, acked.Load())
	}
	if len(seen) < 20 {
		t.Fatalf("channel never forgotten (%d epochs): the test did not race", len(seen))
	}
}

// TestBackgroundSweeper: with the real clock (no Options.Clock) the store
// expires blocks on its own, stamps messages with its coarse clock, and
// Close stops it. In a synctest bubble, the clock is the bubble's: the
// sweeper's ticker and the coarse clock run as in production, and time
// moves only when every goroutine waits, so what a sweep has done by a
// given time is exact.
func TestBackgroundSweeper(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const sweep = time.Millisecond
		s := New(&Options{SweepInterval: sweep, Retention: noHistory(sweep, -1)})
		defer s.Close()
		time.Sleep(5 * time.Millisecond) // the coarse clock ticks on
		before := time.Now()
		p := mustAppend(t, s, "c", []byte("x"))
		f, ok, err := s.Read("c", &p)
		if err != nil || !ok {
			t.Fatalf("Read: %v, %v", ok, err)
		}
		if at := time.Unix(0, f.Time); at.Before(before.Add(-DefaultTimeResolution)) || at.After(before) {
			t.Fatalf("message stamped %v, appended at %v (coarse clock: at most %v before)", at, before, DefaultTimeResolution)
		}
		// Held past its TTL, then at the next sweeps expired and forgotten.
		time.Sleep(3*sweep + DefaultTimeResolution)
		synctest.Wait()
		if st := s.Stats(); st.Channels != 0 || st.Blocks != 0 || st.ExpiredBlocks != 1 {
			t.Fatalf("stats %+v, want the block expired and the channel forgotten", st)
		}
	})
}

// TestCursorOnlyChannelForgotten: Peek creates nothing, and a channel
// that only cursors made is forgotten TTL + grace after the last closes
// (a subscriber back within that resumes in the same epoch); one that
// held a message is not.
func TestCursorOnlyChannelForgotten(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, nil)
	if _, ok := s.Peek("nobody"); ok || s.Stats().Channels != 0 {
		t.Fatalf("Peek of a missing channel: ok %v, %d channels", ok, s.Stats().Channels)
	}
	mustAppend(t, s, "written", []byte("v"))
	var curs []*Cursor
	for _, name := range []string{"a", "b", "written"} {
		c, err := s.Subscribe(name, Start{})
		if err != nil {
			t.Fatal(err)
		}
		curs = append(curs, c, must(s.Subscribe(name, Start{})))
	}
	s.Sweep()
	if n := s.Stats().Channels; n != 3 {
		t.Fatalf("%d channels with cursors open, want 3", n)
	}
	curs[0].Close() // a still has one
	s.Sweep()
	if _, ok := s.Peek("a"); !ok {
		t.Fatal("a forgotten with a cursor open")
	}
	clk.Advance(DefaultTTL) // the channels' creation is older than TTL + grace...
	for _, c := range curs[1:] {
		c.Close()
	}
	s.Sweep()
	if n := s.Stats().Channels; n != 3 {
		t.Fatalf("%d channels just after the cursors closed, want 3: a resume must find them", n)
	}
	clk.Advance(DefaultTTL + DefaultGrace + time.Second) // ...but the last close is what counts
	s.Sweep()
	if n := s.Stats().Channels; n != 1 {
		t.Fatalf("%d channels TTL + grace after the cursors closed, want 1 (written)", n)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
