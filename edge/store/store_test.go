package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// sealedPayload returns a message naming offset i, of a pseudo-random
// size, ending in a CRC of the rest.
func sealedPayload(i uint64, r *rand.Rand) []byte {
	p := make([]byte, 8+r.IntN(200)+4)
	binary.LittleEndian.PutUint64(p, i)
	for j := 8; j < len(p)-4; j++ {
		p[j] = byte(r.Uint32())
	}
	binary.LittleEndian.PutUint32(p[len(p)-4:], crc32.ChecksumIEEE(p[:len(p)-4]))
	return p
}

// checkSealed fails unless f is a complete sealedPayload of its offset.
func checkSealed(f Frame) error {
	p := f.Data
	if len(p) < 12 {
		return errors.New("short frame")
	}
	if crc32.ChecksumIEEE(p[:len(p)-4]) != binary.LittleEndian.Uint32(p[len(p)-4:]) {
		return errors.New("bad checksum")
	}
	if got := binary.LittleEndian.Uint64(p); got != f.Offset {
		return fmt.Errorf("frame data of another offset: sealed %d, at %d", got, f.Offset)
	}
	return nil
}

// TestPartialFrameNeverVisible runs readers (cursors and one-shot reads)
// against a writer and checks every frame they see is complete, in order
// and without gaps.
func TestPartialFrameNeverVisible(t *testing.T) {
	t.Parallel()
	const n = 20000
	s, _ := newTestStore(t, &Options{BlockBytes: 1024, FirstBlockBytes: 256})
	mustAppend(t, s, "c", sealedPayload(1, rand.New(rand.NewPCG(1, 1))))
	errc := make(chan error, 8)
	var wg sync.WaitGroup
	for range 3 {
		c := mustSubscribe(t, s, "c", Start{Position: pos(s.Next("c").Epoch, 1)})
		wg.Go(func() { errc <- follow(c, n) })
	}
	done := make(chan struct{})
	wg.Go(func() { errc <- pollNewest(s, done) })
	r := rand.New(rand.NewPCG(2, 2))
	for i := uint64(2); i <= n; i++ {
		if _, err := s.Append("c", sealedPayload(i, r)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	checkErrs(t, errc)
}

// follow reads c until offset last, checking each frame.
func follow(c *Cursor, last uint64) error {
	w := newWaker()
	want := uint64(1)
	var buf []Frame
	for want <= last {
		var err error
		if buf, err = c.Read(buf[:0], 4096); err != nil {
			return err
		}
		for _, f := range buf {
			if f.Offset != want {
				return errors.New("gap or reorder in cursor reads")
			}
			if err := checkSealed(f); err != nil {
				return err
			}
			want++
		}
		if len(buf) == 0 && c.Wait(w) {
			select {
			case <-w:
			case <-time.After(30 * time.Second):
				return errors.New("no wake for a committed frame")
			}
		}
	}
	return nil
}

// pollNewest reads the newest frame and a random older one until done.
func pollNewest(s *Store, done <-chan struct{}) error {
	r := rand.New(rand.NewPCG(3, 3))
	var prev uint64
	for {
		select {
		case <-done:
			return nil
		default:
		}
		f, ok, err := s.Read("c", nil)
		if err != nil || !ok {
			return errors.New("newest message not readable")
		}
		if err := checkSealed(f); err != nil {
			return err
		}
		if f.Offset < prev {
			return errors.New("newest went backwards")
		}
		prev = f.Offset
		p := pos(s.Next("c").Epoch, 1+r.Uint64N(f.Offset))
		g, ok, err := s.Read("c", p)
		if err != nil || !ok || g.Offset != p.Offset {
			return errors.New("stored message not readable at its position")
		}
		if err := checkSealed(g); err != nil {
			return err
		}
	}
}

func TestReadPositions(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, &Options{BlockBytes: frameOf(4, 3), FirstBlockBytes: frameOf(4, 3)})
	for i := range 10 {
		mustAppend(t, s, "c", payload(i, 4))
	}
	e := s.Next("c").Epoch
	tests := []struct {
		name    string
		pos     *rtm.Position
		want    uint64
		found   bool
		wantErr error
	}{
		{name: "newest", pos: nil, want: 10, found: true},
		{name: "first", pos: pos(e, 1), want: 1, found: true},
		{name: "inclusive in a middle block", pos: pos(e, 5), want: 5, found: true},
		{name: "last", pos: pos(e, 10), want: 10, found: true},
		{name: "next is not there yet", pos: pos(e, 11), found: false},
		{name: "future", pos: pos(e, 100), found: false},
		{name: "other epoch", pos: pos(e+1, 3), wantErr: ErrExpired},
		{name: "offset zero is before the head", pos: pos(e, 0), wantErr: ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, found, err := s.Read("c", tt.pos)
			if !errors.Is(err, tt.wantErr) || found != tt.found || (found && f.Offset != tt.want) {
				t.Fatalf("Read = (%d, %v, %v), want (%d, %v, %v)", f.Offset, found, err, tt.want, tt.found, tt.wantErr)
			}
			if found && string(f.Data) != string(payload(int(f.Offset)-1, 4)) {
				t.Fatalf("Read data = %v", f.Data)
			}
		})
	}
	if _, found, err := s.Read("missing", nil); found || err != nil {
		t.Fatalf("Read(missing, nil) = %v, %v", found, err)
	}
	if _, _, err := s.Read("missing", pos(e, 1)); !errors.Is(err, ErrExpired) {
		t.Fatalf("Read(missing, pos) err = %v, want ErrExpired", err)
	}
}

func TestSubscribePositions(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, &Options{BlockBytes: frameOf(4, 3), FirstBlockBytes: frameOf(4, 3)})
	for i := range 10 {
		mustAppend(t, s, "c", payload(i, 4))
	}
	e := s.Next("c").Epoch
	tests := []struct {
		name    string
		start   Start
		want    []uint64 // read right away
		after   []uint64 // read after 5 more appends (11..15)
		wantPos uint64
		wantErr error
	}{
		{name: "inclusive start", start: Start{Position: pos(e, 4)}, want: seq(4, 10), after: seq(11, 15), wantPos: 4},
		{name: "at the next", start: Start{Position: pos(e, 11)}, after: seq(11, 15), wantPos: 11},
		{name: "future refused", start: Start{Position: pos(e, 13)}, wantErr: ErrFuture},
		{name: "other epoch", start: Start{Position: pos(e+7, 4)}, wantErr: ErrExpired},
		{name: "new messages only", start: Start{}, after: seq(11, 15), wantPos: 11},
		{name: "history count", start: Start{HistoryCount: 3}, want: seq(8, 10), after: seq(11, 15), wantPos: 8},
		{name: "history count beyond the stored", start: Start{HistoryCount: 50}, want: seq(1, 10), after: seq(11, 15), wantPos: 1},
	}
	var cursors []*Cursor
	for _, tt := range tests {
		c, err := s.Subscribe("c", tt.start)
		if !errors.Is(err, tt.wantErr) {
			t.Fatalf("%s: Subscribe err = %v, want %v", tt.name, err, tt.wantErr)
		}
		if err != nil {
			cursors = append(cursors, nil)
			continue
		}
		t.Cleanup(c.Close)
		if got := c.Position(); got != (rtm.Position{Epoch: e, Offset: tt.wantPos}) {
			t.Fatalf("%s: Position = %v, want %d:%d", tt.name, got, e, tt.wantPos)
		}
		if got := offsets(t, c); !equalOffsets(got, tt.want) {
			t.Fatalf("%s: read %v, want %v", tt.name, got, tt.want)
		}
		cursors = append(cursors, c)
	}
	for i := 10; i < 15; i++ {
		mustAppend(t, s, "c", payload(i, 4))
	}
	for i, tt := range tests {
		if c := cursors[i]; c != nil {
			if got := offsets(t, c); !equalOffsets(got, tt.after) {
				t.Fatalf("%s: then read %v, want %v", tt.name, got, tt.after)
			}
		}
	}
}

// TestSubscribeHistoryAge starts at the oldest message younger than the
// age, or at the older of the count and age starts.
func TestSubscribeHistoryAge(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{BlockBytes: frameOf(4, 2), FirstBlockBytes: frameOf(4, 2)})
	for i := range 10 { // one message per second: 1 at t0 ... 10 at t0+9s
		mustAppend(t, s, "c", payload(i, 4))
		clk.Advance(time.Second)
	}
	// now = t0+10s: message i is 11-i seconds old.
	tests := []struct {
		name  string
		start Start
		want  uint64
	}{
		{name: "age", start: Start{HistoryAge: 3 * time.Second}, want: 8},
		{name: "age and a larger count", start: Start{HistoryAge: 3 * time.Second, HistoryCount: 5}, want: 6},
		{name: "count and a larger age", start: Start{HistoryAge: 6 * time.Second, HistoryCount: 2}, want: 5},
		{name: "age older than everything", start: Start{HistoryAge: time.Hour}, want: 1},
		{name: "age younger than everything", start: Start{HistoryAge: 500 * time.Millisecond}, want: 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustSubscribe(t, s, "c", Start{HistoryAge: tt.start.HistoryAge, HistoryCount: tt.start.HistoryCount})
			if got := c.Position().Offset; got != tt.want {
				t.Fatalf("start at %d, want %d", got, tt.want)
			}
		})
	}
}

// TestBinarySearchSkippingOffsets stores sparse offsets over many blocks
// and finds each position (and each gap) by Read and by Subscribe.
func TestBinarySearchSkippingOffsets(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{BlockBytes: frameOf(8, 3), FirstBlockBytes: frameOf(8, 3)})
	var stored []uint64
	for off := uint64(5); len(stored) < 300; off += 1 + uint64(len(stored)%7) {
		if _, err := s.AppendAt("c", off, clk.Now(), payload(int(off), 8)); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, off)
	}
	if b := s.Stats().Blocks; b != 100 {
		t.Fatalf("blocks = %d, want 100", b)
	}
	e := s.Next("c").Epoch
	last := stored[len(stored)-1]
	j := 0
	for o := uint64(5); o <= last+2; o++ {
		for j < len(stored) && stored[j] < o {
			j++
		}
		f, found, err := s.Read("c", pos(e, o))
		if err != nil {
			t.Fatalf("Read(%d): %v", o, err)
		}
		if j == len(stored) {
			if found {
				t.Fatalf("Read(%d) found %d past the last", o, f.Offset)
			}
			continue
		}
		if !found || f.Offset != stored[j] || string(f.Data) != string(payload(int(stored[j]), 8)) {
			t.Fatalf("Read(%d) = %d, %v, want %d", o, f.Offset, found, stored[j])
		}
		c := mustSubscribe(t, s, "c", Start{Position: pos(e, o)})
		fs, err := c.Read(nil, 1)
		if err != nil || len(fs) != 1 || fs[0].Offset != stored[j] {
			t.Fatalf("Subscribe(%d) first read %v, %v, want %d", o, fs, err, stored[j])
		}
		c.Close()
	}
	if _, _, err := s.Read("c", pos(e, 4)); !errors.Is(err, ErrExpired) {
		t.Fatalf("Read before the first offset: err = %v, want ErrExpired", err)
	}
}

func TestAppendAtOffsetOrder(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, nil)
	if _, err := s.AppendAt("c", 10, clk.Now(), []byte("a")); err != nil {
		t.Fatal(err)
	}
	for _, off := range []uint64{0, 9, 10} {
		if _, err := s.AppendAt("c", off, clk.Now(), []byte("b")); !errors.Is(err, ErrOffsetOrder) {
			t.Fatalf("AppendAt(%d) err = %v, want ErrOffsetOrder", off, err)
		}
	}
	p, err := s.AppendAt("c", 11, clk.Now(), []byte("c"))
	if err != nil || p.Offset != 11 {
		t.Fatalf("AppendAt(11) = %v, %v", p, err)
	}
	if p := mustAppend(t, s, "c", []byte("d")); p.Offset != 12 {
		t.Fatalf("Append after AppendAt got offset %d, want 12", p.Offset)
	}
	if n := s.Next("c"); n.Offset != 13 || n.Epoch != p.Epoch {
		t.Fatalf("Next = %v", n)
	}
}

func TestAppendTimesNeverDecrease(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, nil)
	now := clk.Now()
	if _, err := s.AppendAt("c", 1, now, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAt("c", 2, now.Add(-time.Minute), []byte("b")); err != nil {
		t.Fatal(err)
	}
	f, _, _ := s.Read("c", nil)
	if f.Time != now.UnixNano() {
		t.Fatalf("time of an out-of-order message = %v, want raised to %v", time.Unix(0, f.Time), now)
	}
}

func TestTooLargeAndClosed(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, &Options{ChannelBytes: 1000})
	if _, err := s.Append("c", make([]byte, 1000)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	// A frame larger than BlockBytes gets a block of its own.
	if _, err := s.Append("c", make([]byte, 900)); err != nil {
		t.Fatal(err)
	}
	c := mustSubscribe(t, s, "c", Start{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append("c", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if _, err := s.Subscribe("c", Start{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Subscribe after Close: %v", err)
	}
	c.Close()
	c.Close()
	if _, err := c.Read(nil, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read of a closed cursor: %v", err)
	}
}

// TestCursorReadLimits checks the byte limit, the at-least-one rule and
// that a dst with capacity is filled without allocating.
func TestCursorReadLimits(t *testing.T) {
	s, _ := newTestStore(t, nil)
	c := mustSubscribe(t, s, "c", Start{})
	for i := range 10 {
		mustAppend(t, s, "c", payload(i, 100))
	}
	fs, err := c.Read(nil, 250)
	if err != nil || len(fs) != 2 {
		t.Fatalf("read %d frames (%v), want 2 within 250 bytes", len(fs), err)
	}
	if fs, _ = c.Read(nil, 10); len(fs) != 1 || fs[0].Offset != 3 {
		t.Fatalf("a frame over the limit: read %v, want just offset 3", fs)
	}
	// AllocsPerRun reads twice: 4..6, then 7..9.
	dst := make([]Frame, 0, 3)
	allocs := testing.AllocsPerRun(1, func() { dst, err = c.Read(dst[:0], 0) })
	if err != nil || len(dst) != 3 || dst[0].Offset != 7 || allocs != 0 {
		t.Fatalf("read %d frames from %d with %v allocs (%v), want 3 from 7 and none", len(dst), dst[0].Offset, allocs, err)
	}
	if cap(dst[0].Data) != len(dst[0].Data) {
		t.Fatal("Frame.Data capacity reaches into the block")
	}
}

// TestShardSpread: names that differ only in their ends spread over the
// shards, so creating them does not serialize on one lock.
func TestShardSpread(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		format string
	}{
		{name: "short", format: "c%d"},
		{name: "medium", format: "room-%d"},
		{name: "long", format: "app/chat/room-%06d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var count [numShards]int
			for i := range 6400 {
				count[shardIndex(fmt.Sprintf(tt.format, i))]++
			}
			for i, n := range count {
				if n < 25 || n > 400 {
					t.Fatalf("shard %d holds %d of 6400 names", i, n)
				}
			}
		})
	}
}
