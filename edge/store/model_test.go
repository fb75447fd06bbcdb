package store

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

var modelSeed = flag.Uint64("seed", 0, "run TestModel with this seed only (also env STORE_MODEL_SEED)")

// trace logs every operation of TestModel (env STORE_MODEL_TRACE=1).
var trace = os.Getenv("STORE_MODEL_TRACE") != ""

// TestModel runs random appends, reads, subscriptions, cursor reads,
// fast-forwards, clock advances and sweeps against the store and against a
// plain model of the rules, comparing every result.
func TestModel(t *testing.T) {
	t.Parallel()
	seed := *modelSeed
	if env := os.Getenv("STORE_MODEL_SEED"); seed == 0 && env != "" {
		var err error
		if seed, err = strconv.ParseUint(env, 10, 64); err != nil {
			t.Fatalf("STORE_MODEL_SEED: %v", err)
		}
	}
	runs := uint64(40)
	if env := os.Getenv("STORE_MODEL_RUNS"); env != "" {
		var err error
		if runs, err = strconv.ParseUint(env, 10, 64); err != nil {
			t.Fatalf("STORE_MODEL_RUNS: %v", err)
		}
	}
	seeds := []uint64{seed}
	if seed == 0 {
		base := uint64(time.Now().UnixNano())
		seeds = nil
		for i := range runs {
			seeds = append(seeds, base+i)
		}
	}
	for _, sd := range seeds {
		t.Run(fmt.Sprintf("seed=%d", sd), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, sd)
			defer func() {
				if t.Failed() {
					t.Logf("reproduce with: go test -race -run 'TestModel' ./edge/store/ -seed=%d", sd)
				}
			}()
			for i := 0; i < 1500 && !t.Failed(); i++ {
				h.step(i)
			}
		})
	}
}

// harness drives the store and the model with the same random operations.
type harness struct {
	t       *testing.T
	seed    uint64
	r       *rand.Rand
	s       *Store
	clk     *fakeClock
	m       *model
	cursors []*mCursor
	names   []string
	handles map[string]*Channel // kept for the whole run, across forgetting
	op      string              // the current operation, for failure messages
}

func newHarness(t *testing.T, seed uint64) *harness {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	bb := 40 + r.IntN(360)
	o := &Options{
		BlockBytes:      bb,
		FirstBlockBytes: 1 + r.IntN(bb),
		ChannelBytes:    pick(r, int64(bb+r.IntN(6*bb)), 1<<30),
		StoreBytes:      pick(r, int64(bb+r.IntN(12*bb)), 1<<30),
	}
	rets := map[string]Retention{}
	names := []string{"a", "b", "channel-with-a-long-name"}
	for _, n := range names {
		rets[n] = Retention{
			TTL:          time.Duration(100+r.IntN(5000)) * time.Millisecond,
			Grace:        pick(r, -1, 0, time.Duration(1+r.IntN(3000))*time.Millisecond),
			HistoryCount: pick(r, -1, 0, 1+r.IntN(4)),
			HistoryAge:   pick(r, -1, 0, time.Duration(1+r.IntN(20))*time.Second),
		}
	}
	o.Retention = func(name string) Retention { return rets[name] }
	s, clk := newTestStore(t, o)
	h := &harness{t: t, seed: seed, r: r, s: s, clk: clk, names: names, handles: map[string]*Channel{}}
	h.m = newModel(s, clk)
	return h
}

// pick returns one of vs at random.
func pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

func (h *harness) fail(format string, args ...any) {
	h.t.Helper()
	if trace {
		h.t.Log(h.dump())
	}
	h.t.Fatalf("seed %d, op %s: %s", h.seed, h.op, fmt.Sprintf(format, args...))
}

// step runs one random operation, then checks the store's counters.
func (h *harness) step(i int) {
	name := pick(h.r, h.names...)
	h.op = "none"
	switch n := h.r.IntN(100); {
	case n < 30:
		h.doAppend(name)
	case n < 40:
		h.doAppendAt(name)
	case n < 48:
		h.doRead(name)
	case n < 56:
		h.doSubscribe(name)
	case n < 72:
		h.doCursorRead()
	case n < 75:
		h.doFastForward()
	case n < 79:
		h.doClose()
	case n < 81:
		h.op = "Next " + name
		h.m.obtain(name)
	default:
		h.doAdvance()
	}
	if trace {
		h.t.Logf("%d: %s", i, h.op)
	}
	h.checkNext()
	h.checkStats()
	if i%10 == 0 {
		h.checkReadable()
	}
}

// data returns a random message body, sometimes larger than a block or
// than the limits.
func (h *harness) data() []byte {
	size := h.r.IntN(60)
	switch h.r.IntN(20) {
	case 0:
		size = h.s.opts.BlockBytes + h.r.IntN(h.s.opts.BlockBytes)
	case 1: // at the limits (when they are small enough to build)
		if limit := min(h.s.opts.ChannelBytes, h.s.opts.StoreBytes); limit < 1<<16 {
			size = int(limit) - frameOverhead + h.r.IntN(3)
		}
	}
	d := make([]byte, size)
	for i := range d {
		d[i] = byte(h.r.Uint32())
	}
	return d
}

// handle returns the run's Channel handle for name.
func (h *harness) handle(name string) *Channel {
	if c := h.handles[name]; c != nil {
		return c
	}
	c := h.s.Channel(name)
	h.handles[name] = c
	return c
}

func (h *harness) doAppend(name string) {
	d := h.data()
	h.op = fmt.Sprintf("Append(%s, %d bytes)", name, len(d))
	var p rtm.Position
	var err error
	if h.r.IntN(2) == 0 {
		p, err = h.s.Append(name, d)
	} else {
		h.op = "handle " + h.op
		p, err = h.handle(name).Append(d)
	}
	want, werr := h.m.append(name, 0, h.m.now(), false, d)
	h.checkPos(p, err, want, werr)
}

func (h *harness) doAppendAt(name string) {
	d := h.data()
	var last uint64
	if ch := h.m.chans[name]; ch != nil {
		last = ch.last
	}
	off := last + 1 + uint64(h.r.IntN(5))
	if h.r.IntN(8) == 0 {
		off = uint64(h.r.IntN(int(last) + 1)) // not above the last
	}
	at := h.clk.Now().Add(time.Duration(h.r.IntN(4000)-3000) * time.Millisecond)
	h.op = fmt.Sprintf("AppendAt(%s, %d, %d bytes)", name, off, len(d))
	var p rtm.Position
	var err error
	if h.r.IntN(2) == 0 {
		p, err = h.s.AppendAt(name, off, at, d)
	} else {
		h.op = "handle " + h.op
		p, err = h.handle(name).AppendAt(off, at, d)
	}
	want, werr := h.m.append(name, off, at.UnixNano(), true, d)
	h.checkPos(p, err, want, werr)
}

// checkPos compares an append's outcome and learns a new channel's epoch.
func (h *harness) checkPos(p rtm.Position, err error, want rtm.Position, werr error) {
	h.t.Helper()
	if werr != nil || err != nil {
		if !errors.Is(err, werr) || werr == nil {
			h.fail("err = %v, model %v", err, werr)
		}
		return
	}
	if p != want {
		h.fail("position %v, model offset %d", p, want.Offset)
	}
}

// randPos returns a position near the channel's range, sometimes of
// another epoch.
func (h *harness) randPos(name string) *rtm.Position {
	ch := h.m.chans[name]
	if ch == nil {
		return pos(uint64(1+h.r.IntN(3)), uint64(h.r.IntN(5)))
	}
	p := pos(ch.epoch, uint64(h.r.IntN(int(ch.last)+4)))
	if h.r.IntN(10) == 0 {
		p.Epoch += uint64(1 + h.r.IntN(2))
	}
	return p
}

func (h *harness) doRead(name string) {
	var p *rtm.Position
	if h.r.IntN(4) > 0 {
		p = h.randPos(name)
	}
	h.op = fmt.Sprintf("Read(%s, %v)", name, p)
	f, ok, err := h.s.Read(name, p)
	wf, wok, werr := h.m.read(name, p)
	if !errors.Is(err, werr) || (werr == nil) != (err == nil) || ok != wok {
		h.fail("Read = %v, %v; model %v, %v", ok, err, wok, werr)
	}
	if ok {
		h.checkFrame(f, wf)
	}
}

func (h *harness) checkFrame(f Frame, want mMsg) {
	h.t.Helper()
	if f.Offset != want.off || f.Time != want.t || string(f.Data) != string(want.data) {
		h.fail("frame (%d, %d, %d bytes), model (%d, %d, %d bytes)",
			f.Offset, f.Time, len(f.Data), want.off, want.t, len(want.data))
	}
}

func (h *harness) doSubscribe(name string) {
	var st Start
	switch h.r.IntN(3) {
	case 0:
		st.Position = h.randPos(name)
	case 1:
		if h.r.IntN(2) == 0 {
			st.HistoryCount = 1 + h.r.IntN(6)
		}
		if h.r.IntN(2) == 0 {
			st.HistoryAge = time.Duration(1+h.r.IntN(8000)) * time.Millisecond
		}
	}
	h.op = fmt.Sprintf("Subscribe(%s, %+v)", name, st)
	c, err := h.s.Subscribe(name, st)
	mc, werr := h.m.subscribe(name, st)
	if !errors.Is(err, werr) || (werr == nil) != (err == nil) {
		h.fail("Subscribe err = %v, model %v", err, werr)
	}
	if err != nil {
		return
	}
	h.t.Cleanup(c.Close)
	mc.c = c
	h.cursors = append(h.cursors, mc)
	if got, want := c.Position(), (rtm.Position{Epoch: mc.ch.epoch, Offset: mc.next}); got != want {
		h.fail("cursor at %v, model %v", got, want)
	}
}

// cursor returns a random open cursor, or nil.
func (h *harness) cursor() *mCursor {
	if len(h.cursors) == 0 {
		return nil
	}
	return h.cursors[h.r.IntN(len(h.cursors))]
}

func (h *harness) doCursorRead() {
	mc := h.cursor()
	if mc == nil {
		return
	}
	maxBytes := pick(h.r, 0, 1+h.r.IntN(100), 1+h.r.IntN(1000))
	h.op = fmt.Sprintf("Cursor.Read(%s at %d, %d)", mc.ch.name, mc.next, maxBytes)
	fs, err := mc.c.Read(nil, maxBytes)
	want, werr := h.m.cursorRead(mc, maxBytes)
	if werr != nil {
		var e *OutOfSyncError
		if !errors.As(err, &e) || !errors.Is(err, ErrOutOfSync) || *e != *werr {
			h.fail("Read err = %v, model %+v", err, *werr)
		}
		return
	}
	if err != nil || len(fs) != len(want) {
		h.fail("Read = %d frames, %v; model %d frames", len(fs), err, len(want))
	}
	for i := range fs {
		h.checkFrame(fs[i], want[i])
	}
	if got, want := mc.c.Position(), (rtm.Position{Epoch: mc.ch.epoch, Offset: mc.next}); got != want {
		h.fail("cursor at %v, model %v", got, want)
	}
}

func (h *harness) doFastForward() {
	mc := h.cursor()
	if mc == nil {
		return
	}
	h.op = fmt.Sprintf("FastForward(%s at %d)", mc.ch.name, mc.next)
	missed, p := mc.c.FastForward()
	wmissed := h.m.fastForward(mc)
	if missed != wmissed || p != (rtm.Position{Epoch: mc.ch.epoch, Offset: mc.next}) {
		h.fail("FastForward = %d, %v; model %d, %d", missed, p, wmissed, mc.next)
	}
}

func (h *harness) doClose() {
	if len(h.cursors) == 0 {
		return
	}
	i := h.r.IntN(len(h.cursors))
	mc := h.cursors[i]
	h.op = "Close " + mc.ch.name
	mc.c.Close()
	mc.ch.cursors--
	h.cursors = append(h.cursors[:i], h.cursors[i+1:]...)
	if ch := mc.ch; ch.cursors == 0 && len(ch.live()) == 0 {
		switch {
		case ch.drained:
			h.m.forget(ch) // the store forgets it at once
		case ch.appends == 0:
			ch.touched = max(ch.touched, h.m.now()) // it lingers from now
		}
	}
}

// doAdvance moves the clock, sometimes to an exact expiry boundary, and
// sweeps.
func (h *harness) doAdvance() {
	d := pick(h.r, 0, time.Duration(h.r.IntN(1000))*time.Millisecond,
		time.Duration(h.r.IntN(10000))*time.Millisecond, time.Duration(h.r.IntN(30))*time.Second)
	if b := h.m.randBlock(h.r); b != nil && h.r.IntN(2) == 0 {
		ret := b.ch.ret
		edge := b.t + int64(pick(h.r, ret.TTL, ret.TTL+ret.Grace, ret.HistoryAge)) + int64(h.r.IntN(2))
		if edge > h.m.now() {
			d = time.Duration(edge - h.m.now())
		}
	}
	h.op = fmt.Sprintf("Advance(%v)+Sweep", d)
	h.clk.Advance(d)
	h.s.Sweep()
	h.m.sweep()
}

// checkNext compares Next for the channels the model knows (it would
// create the others).
func (h *harness) checkNext() {
	for _, ch := range h.m.chans {
		if got, want := h.s.Next(ch.name), (rtm.Position{Epoch: ch.epoch, Offset: ch.last + 1}); got != want {
			h.fail("Next(%s) = %v, model %v", ch.name, got, want)
		}
	}
}

func (h *harness) checkStats() {
	st := h.s.Stats()
	m := h.m
	want := Stats{
		Channels: int64(len(m.chans)), Blocks: m.liveBlocks(), Bytes: m.bytes, Memory: m.memory, Appends: m.appends,
		ExpiredBlocks: m.expired, EvictedBlocks: m.evicted, OutOfSync: m.outOfSync,
	}
	if st != want {
		h.fail("Stats = %+v, model %+v", st, want)
	}
}

// checkReadable compares Read at every offset of every channel.
func (h *harness) checkReadable() {
	for _, name := range h.names {
		ch := h.m.chans[name]
		if ch == nil {
			continue
		}
		for o := uint64(0); o <= ch.last+1; o++ {
			p := pos(ch.epoch, o)
			h.op = fmt.Sprintf("check Read(%s, %v)", name, p)
			f, ok, err := h.s.Read(name, p)
			wf, wok, werr := h.m.read(name, p)
			if !errors.Is(err, werr) || (werr == nil) != (err == nil) || ok != wok || ok && f.Offset != wf.off {
				h.fail("Read = %d, %v, %v; model %d, %v, %v", f.Offset, ok, err, wf.off, wok, werr)
			}
		}
	}
}

// dump describes the store's and the model's channels, for tracing.
func (h *harness) dump() string {
	out := fmt.Sprintf("now %d\n", h.m.now())
	for _, name := range h.names {
		if ch := h.s.lookup(name); ch != nil {
			q := ch.q.Load()
			out += fmt.Sprintf("store %s: head %d next %d protected %v\n", name, q.head, q.next, ch.protected)
			for _, b := range q.blocks {
				out += fmt.Sprintf("  block first %d count %d time %d old %v cap %d\n", b.first, b.count, b.time, b.old, len(b.buf))
			}
		}
		if ch := h.m.chans[name]; ch != nil {
			out += fmt.Sprintf("model %s: ret %+v\n", name, ch.ret)
			for _, b := range ch.blocks {
				if !b.deleted {
					out += fmt.Sprintf("  block first %d msgs %d time %d old %v cap %d\n", b.msgs[0].off, len(b.msgs), b.t, b.old, b.size)
				}
			}
		}
	}
	return out
}
