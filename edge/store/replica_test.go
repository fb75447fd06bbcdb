package store

import (
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// A replica numbers messages with the shared log's offsets: a channel
// holds what was appended after its creation, and a position in the gap
// before a block's first frame is not expired while that block is the
// head.
func TestReplicaChannelsStartAfterApplied(t *testing.T) {
	s, clk := newTestStore(t, &Options{Epoch: 42, BlockBytes: 256, FirstBlockBytes: 256})
	now := clk.Now()
	s.SetApplied(0, 100)
	s.SetApplied(0, 50) // ignored: offsets only rise

	// A channel created now holds offsets after 100.
	c := mustSubscribe(t, s, "late", Start{HistoryCount: 10})
	if got := c.Position(); got.Epoch != 42 || got.Offset != 101 {
		t.Fatalf("new replica channel starts at %v, want 42:101", got)
	}
	c.Close()
	if _, _, err := s.Read("late", pos(42, 100)); !errors.Is(err, ErrExpired) {
		t.Fatalf("Read before the replica's history: err = %v, want ErrExpired", err)
	}
	if _, err := s.Subscribe("late", Start{Position: pos(42, 99)}); !errors.Is(err, ErrExpired) {
		t.Fatalf("Subscribe before the replica's history: err = %v, want ErrExpired", err)
	}

	// Offsets skip; a position inside a gap starts at the next frame.
	for _, o := range []uint64{110, 130, 170} {
		if _, err := s.AppendAt("late", o, now, payload(int(o), 100)); err != nil {
			t.Fatal(err)
		}
		s.SetApplied(0, o)
	}
	for _, tc := range []struct {
		name string
		at   uint64
		want []uint64
	}{
		{"before the first frame", 101, []uint64{110, 130, 170}},
		{"in a gap", 111, []uint64{130, 170}},
		{"at a frame", 170, []uint64{170}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustSubscribe(t, s, "late", Start{Position: pos(42, tc.at)})
			defer c.Close()
			if got := offsets(t, c); !equalOffsets(got, tc.want) {
				t.Fatalf("offsets from %d = %v, want %v", tc.at, got, tc.want)
			}
		})
	}

	// Once the block of 110 and 130 expires, the head block (170's)
	// covers everything after 130: resuming after 130 is not expired.
	clk.Advance(2 * time.Minute)
	if _, err := s.AppendAt("late", 200, clk.Now(), payload(200, 100)); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	if _, _, err := s.Read("late", pos(42, 110)); !errors.Is(err, ErrExpired) {
		t.Fatalf("Read of an expired offset: err = %v, want ErrExpired", err)
	}
	c = mustSubscribe(t, s, "late", Start{Position: pos(42, 131)})
	defer c.Close()
	if got := offsets(t, c); !equalOffsets(got, []uint64{170, 200}) {
		t.Fatalf("offsets after the expired block = %v, want [170 200]", got)
	}
}

// MovedOn says a replica's channel had a message after an offset only if
// the channel was held from before that offset: a channel created later
// starts after everything applied, whatever came after the offset in the
// log.
func TestReplicaMovedOn(t *testing.T) {
	s, clk := newTestStore(t, &Options{Epoch: 42})
	s.SetApplied(0, 10)
	for _, o := range []uint64{11, 12} {
		if _, err := s.AppendAt("held", o, clk.Now(), payload(int(o), 10)); err != nil {
			t.Fatal(err)
		}
		s.SetApplied(0, o)
	}
	if !s.MovedOn("held", 11) || s.MovedOn("held", 12) {
		t.Errorf("held: moved on after 11 %v, after 12 %v; want true, false", s.MovedOn("held", 11), s.MovedOn("held", 12))
	}
	// Created (by a subscriber, say) after 12 was applied elsewhere in
	// the log: its offsets start after 12, and 13 may follow anything.
	mustSubscribe(t, s, "late", Start{}).Close()
	if _, err := s.AppendAt("late", 13, clk.Now(), payload(13, 10)); err != nil {
		t.Fatal(err)
	}
	if s.MovedOn("late", 5) || s.MovedOn("late", 12) || s.MovedOn("unknown", 1) {
		t.Errorf("a channel created after the offset, or none, said it moved on")
	}
}

// Held counts what a cursor would read of what its channel holds, across
// blocks and from inside one, and stops at its limit.
func TestCursorHeld(t *testing.T) {
	s, clk := newTestStore(t, &Options{Epoch: 42, BlockBytes: 256, FirstBlockBytes: 256})
	s.SetApplied(0, 10)
	empty := mustSubscribe(t, s, "held", Start{HistoryCount: 5})
	if got := empty.Held(100); got != 0 {
		t.Errorf("an empty channel holds %d, want 0", got)
	}
	empty.Close()
	var offs []uint64
	for i := range 20 {
		o := uint64(11 + 3*i) // offsets skip, as in a shared log
		if _, err := s.AppendAt("held", o, clk.Now(), payload(int(o), 60)); err != nil {
			t.Fatal(err)
		}
		s.SetApplied(0, o)
		offs = append(offs, o)
	}
	for _, tc := range []struct {
		name  string
		start Start
		limit int
		want  int
	}{
		{"the newest three", Start{HistoryCount: 3}, 100, 3},
		{"more than held", Start{HistoryCount: 50}, 100, 20},
		{"at a frame inside a block", Start{Position: pos(42, offs[7])}, 100, 13},
		{"in a gap", Start{Position: pos(42, offs[7]+1)}, 100, 12},
		{"cut at the limit", Start{HistoryCount: 50}, 4, 4},
		{"live", Start{}, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustSubscribe(t, s, "held", tc.start)
			defer c.Close()
			if got := c.Held(tc.limit); got != tc.want {
				t.Fatalf("Held(%d) = %d, want %d", tc.limit, got, tc.want)
			}
			if tc.limit >= 100 {
				if n := len(offsets(t, c)); n != tc.want {
					t.Fatalf("the cursor read %d messages, Held said %d", n, tc.want)
				}
			}
		})
	}
}

// A replica's feed may lag the log, and the log may drop a purged
// channel's messages before the feed read them: a purge through an
// offset the replica never held expires the positions up to it and puts
// every cursor at or before it out of sync, woken if it was waiting,
// though the store held nothing it missed; a cursor past it reads on.
func TestReplicaPurgeThroughUnheld(t *testing.T) {
	s, clk := newTestStore(t, &Options{Epoch: 42})
	s.SetApplied(0, 10)
	appendAt := func(o uint64) {
		t.Helper()
		if _, err := s.AppendAt("c", o, clk.Now(), payload(int(o), 10)); err != nil {
			t.Fatal(err)
		}
		s.SetApplied(0, o)
	}
	waiting := mustSubscribe(t, s, "c", Start{})
	appendAt(20)
	behind := mustSubscribe(t, s, "c", Start{Position: pos(42, 20)}) // 20 unread
	if got := offsets(t, waiting); !equalOffsets(got, []uint64{20}) {
		t.Fatalf("before the purge: read %v, want [20]", got)
	}
	w := newWaker()
	if !waiting.Wait(w) {
		t.Fatal("a cursor with nothing to read did not arm")
	}
	past := mustSubscribe(t, s, "c", Start{Position: pos(42, 31)}) // waits for 31 on

	// 30, the channel's newest in the log, was purged before the feed
	// read it: the marker (at 35) names it.
	if _, err := s.PurgeThrough("c", 30, nil); err != nil {
		t.Fatal(err)
	}
	s.SetApplied(0, 35)
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	awaitWake(t, w, timeout)
	appendAt(40) // after the purge: none of them may read it first

	for name, c := range map[string]*Cursor{"at the end": waiting, "behind": behind} {
		fs, err := c.Read(nil, 0)
		if e := oosError(t, err); len(fs) != 0 || e.Missed < 1 || e.Position.Offset > 30 {
			t.Fatalf("cursor %s: read %d frames, %+v; want out of sync before 31, at least one missed", name, len(fs), e)
		}
		if missed, p := c.FastForward(); missed < 1 || p.Offset != 31 {
			t.Fatalf("cursor %s: fast-forward missed %d to %v, want at least 1 to 42:31", name, missed, p)
		}
		if got := offsets(t, c); !equalOffsets(got, []uint64{40}) {
			t.Fatalf("cursor %s after fast-forward: read %v, want [40]", name, got)
		}
	}
	if got := offsets(t, past); !equalOffsets(got, []uint64{40}) {
		t.Fatalf("cursor past the purge: read %v, want [40]", got)
	}
	for _, o := range []uint64{21, 30} {
		if _, _, err := s.Read("c", pos(42, o)); !errors.Is(err, ErrExpired) {
			t.Errorf("Read at purged %d: %v, want ErrExpired", o, err)
		}
		if _, err := s.Subscribe("c", Start{Position: pos(42, o)}); !errors.Is(err, ErrExpired) {
			t.Errorf("Subscribe at purged %d: %v, want ErrExpired", o, err)
		}
	}
	if f, found, err := s.Read("c", pos(42, 31)); err != nil || !found || f.Offset != 40 {
		t.Errorf("Read at 31: %v %v %v, want 40", f.Offset, found, err)
	}
}

// A purge through an offset the replica never held, of a channel whose
// tail is an anchor already (a purge before it dropped everything held),
// still reaches the cursors at its end; one through an offset held is a
// plain purge, after which a cursor at the end reads on.
func TestReplicaPurgeThroughAnchor(t *testing.T) {
	s, clk := newTestStore(t, &Options{Epoch: 42})
	if _, err := s.AppendAt("c", 20, clk.Now(), payload(20, 10)); err != nil {
		t.Fatal(err)
	}
	s.SetApplied(0, 20)
	c := mustSubscribe(t, s, "c", Start{Position: pos(42, 20)})
	if got := offsets(t, c); !equalOffsets(got, []uint64{20}) {
		t.Fatalf("read %v, want [20]", got)
	}
	if _, err := s.PurgeThrough("c", 20, nil); err != nil {
		t.Fatal(err)
	}
	if fs, err := c.Read(nil, 0); err != nil || len(fs) != 0 {
		t.Fatalf("after a purge of what it read: %d frames, %v; want nothing", len(fs), err)
	}
	if _, err := s.PurgeThrough("c", 30, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(nil, 0); oosError(t, err).Missed != 1 {
		t.Fatalf("after a purge of 30, never held: %v, want one missed", err)
	}
}

// A replica of a log in partitions gives each channel its partition's
// epoch, and starts it after its partition's applied offset: a channel
// of one partition is not cut short by another's higher offsets, and a
// position of another partition's epoch is expired, not misread.
func TestReplicaPartitions(t *testing.T) {
	of := func(name string) int {
		if name[0] == 'b' {
			return 1
		}
		return 0
	}
	s, clk := newTestStore(t, &Options{Epoch: 9, Partitions: &Partitions{Epochs: []uint64{42, 43}, Of: of}})
	s.SetApplied(0, 100)
	s.SetApplied(1, 7)
	if s.Applied(0) != 100 || s.Applied(1) != 7 {
		t.Fatalf("applied = %d, %d; want 100, 7", s.Applied(0), s.Applied(1))
	}
	for _, tc := range []struct {
		name string
		want rtm.Position
	}{{"a", rtm.Position{Epoch: 42, Offset: 101}}, {"b", rtm.Position{Epoch: 43, Offset: 8}}} {
		c := mustSubscribe(t, s, tc.name, Start{})
		if got := c.Position(); got != tc.want {
			t.Fatalf("channel %s starts at %v, want %v", tc.name, got, tc.want)
		}
		c.Close()
	}
	if _, err := s.AppendAt("b", 8, clk.Now(), payload(8, 10)); err != nil {
		t.Fatal(err)
	}
	s.SetApplied(1, 8)
	if _, _, err := s.Read("b", pos(42, 8)); !errors.Is(err, ErrExpired) {
		t.Fatalf("Read of b at partition 0's epoch: err = %v, want ErrExpired", err)
	}
	f, ok, err := s.Read("b", pos(43, 8))
	if err != nil || !ok || f.Offset != 8 {
		t.Fatalf("Read of b at 43:8 = %v, %v, %v; want its message", f.Offset, ok, err)
	}
}
