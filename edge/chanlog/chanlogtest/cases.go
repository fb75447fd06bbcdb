package chanlogtest

import (
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Appends get growing positions; a read finds the newest, or the message
// at a position; a channel never written reads as nothing at 0:0.
func testAppendRead(t *testing.T, e Env) {
	ps := publish(t, e, "app\x00a", "one", "two", "three")
	r, err := e.Log.Read(ctx(t), "app\x00a", nil)
	if err != nil || !r.Found || string(r.Frame.Data) != "three" || r.Position != ps[2] {
		t.Fatalf("read newest: %+v, %v; want three at %v", r, err, ps[2])
	}
	r, err = e.Log.Read(ctx(t), "app\x00a", &ps[0])
	if err != nil || !r.Found || string(r.Frame.Data) != "one" || r.Position != ps[0] {
		t.Fatalf("read at %v: %+v, %v; want one", ps[0], r, err)
	}
	r, err = e.Log.Read(ctx(t), "app\x00never", nil)
	if err != nil || r.Found || r.Position != (rtm.Position{}) {
		t.Fatalf("read of a channel never written: %+v, %v; want nothing at 0:0", r, err)
	}
}

// A history of count n starts at the n-th newest message, then goes on
// live.
func testHistoryCount(t *testing.T, e Env) {
	publish(t, e, "app\x00h", "1", "2", "3", "4", "5")
	cur, cu, err := e.Log.Subscribe(ctx(t), "app\x00h", store.Start{HistoryCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() { done <- drain(t, cur, cu, 4) }()
	publish(t, e, "app\x00h", "6")
	same(t, "history count 3, then live", <-done, "3", "4", "5", "6")
}

// A subscription at a position starts at that message.
func testSubscribeAt(t *testing.T, e Env) {
	ps := publish(t, e, "app\x00p", "1", "2", "3")
	cur, cu, err := e.Log.Subscribe(ctx(t), "app\x00p", store.Start{Position: &ps[1]})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "subscribe at the second", drain(t, cur, cu, 2), "2", "3")
}

// History pages hold at most limit messages, say whether more follow,
// and go on from a position.
func testHistoryPages(t *testing.T, e Env) {
	ps := publish(t, e, "app\x00g", "1", "2", "3", "4")
	page := func(at *rtm.Position, count, limit int) ([]string, bool) {
		var got []string
		var more bool
		err := e.Log.History(ctx(t), "app\x00g", at, count, limit, func(fs []store.Frame, epoch uint64, m bool) error {
			for _, f := range fs {
				got = append(got, string(f.Data))
			}
			if len(fs) > 0 && epoch != ps[0].Epoch {
				t.Errorf("history epoch %d, want %d", epoch, ps[0].Epoch)
			}
			more = m
			return nil
		})
		if err != nil {
			t.Fatalf("history at %v count %d: %v", at, count, err)
		}
		return got, more
	}
	got, more := page(nil, 3, 2)
	same(t, "the newest 3, 2 a page", got, "2", "3")
	if !more {
		t.Fatal("a page short of the history says no more follow")
	}
	got, more = page(&ps[2], 0, 10)
	same(t, "from the third", got, "3", "4")
	if more {
		t.Fatal("the last page says more follow")
	}
}

// A compare-and-set stores only at the newest position, and answers the
// message it replaced, or the newest instead.
func testCompareAndSet(t *testing.T, e Env) {
	key := "app\x00c"
	empty := chanlog.Write{Message: chanlog.Message{Payload: []byte("first")}, Compare: true, Previous: true}
	p0, prior, err := e.Log.AppendIf(ctx(t), key, empty, nil)
	if err != nil || prior.Found {
		t.Fatalf("write at 0:0 on an empty channel: %v, %+v; want stored, nothing before", err, prior)
	}
	w := chanlog.Write{Message: chanlog.Message{Payload: []byte("second")}, Compare: true, Expect: p0, Previous: true}
	p1, prior, err := e.Log.AppendIf(ctx(t), key, w, nil)
	if err != nil || !prior.Found || string(prior.Data) != "first" || prior.Position != p0 || p1.Offset <= p0.Offset {
		t.Fatalf("write at the newest: %v at %v, prior %+v; want stored after first", err, p1, prior)
	}
	w.Payload = []byte("stale")
	_, prior, err = e.Log.AppendIf(ctx(t), key, w, nil)
	if !errors.Is(err, store.ErrMismatch) || string(prior.Data) != "second" || prior.Position != p1 {
		t.Fatalf("write at an older position: %v, prior %+v; want a mismatch naming second", err, prior)
	}
	r, err := e.Log.Read(ctx(t), key, nil)
	if err != nil || string(r.Frame.Data) != "second" {
		t.Fatalf("after a refused write the newest is %q, %v; want second", r.Frame.Data, err)
	}
}

// A purge answers the newest message it dropped; the positions up to it
// are expired, and the channel goes on after them.
func testPurge(t *testing.T, e Env) {
	key := "app\x00u"
	ps := publish(t, e, key, "1", "2")
	prior, err := e.Log.Purge(ctx(t), key, nil)
	if err != nil || !prior.Found || string(prior.Data) != "2" {
		t.Fatalf("purge: %+v, %v; want the newest dropped, 2", prior, err)
	}
	if r, err := e.Log.Read(ctx(t), key, nil); err != nil || r.Found {
		t.Fatalf("read after a purge: %+v, %v; want nothing", r, err)
	}
	if _, err := e.Log.Read(ctx(t), key, &ps[0]); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("read at a purged position: %v; want expired", err)
	}
	if _, _, err := e.Log.Subscribe(ctx(t), key, store.Start{Position: &ps[0]}); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("subscribe at a purged position: %v; want expired", err)
	}
	// A log may number the channel anew (the memory log forgets a
	// purged channel without subscribers): never at a purged position.
	after := publish(t, e, key, "3")
	if after[0].Epoch == ps[1].Epoch && after[0].Offset <= ps[1].Offset {
		t.Fatalf("a message after the purge at %v, not after %v", after[0], ps[1])
	}
	if r, err := e.Log.Read(ctx(t), key, nil); err != nil || string(r.Frame.Data) != "3" {
		t.Fatalf("read after a purge and a publish: %q, %v; want 3", r.Frame.Data, err)
	}
}

// Past the channel's retention a message is no longer read, once the
// store swept it.
func testExpiry(t *testing.T, e Env) {
	key := "app\x00x"
	ps := publish(t, e, key, "old")
	e.Clock.Advance(2 * time.Hour)
	e.Store.Sweep()
	if r, err := e.Log.Read(ctx(t), key, nil); err != nil || r.Found {
		t.Fatalf("read of an expired newest: %+v, %v; want nothing", r, err)
	}
	if _, _, err := e.Log.Subscribe(ctx(t), key, store.Start{Position: &ps[0]}); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("subscribe at an expired position: %v; want expired", err)
	}
}

// A switch fires only while the message that armed it is the newest.
func testFire(t *testing.T, e Env) {
	key := "app\x00f"
	ps := publish(t, e, key, "armed")
	if err := e.Log.Fire(ctx(t), key, ps[0], []byte("fired")); err != nil {
		t.Fatalf("fire at the newest: %v", err)
	}
	if err := e.Log.Fire(ctx(t), key, ps[0], []byte("again")); !errors.Is(err, store.ErrMismatch) {
		t.Fatalf("fire after another message: %v; want a mismatch", err)
	}
	if r, err := e.Log.Read(ctx(t), key, nil); err != nil || string(r.Frame.Data) != "fired" {
		t.Fatalf("newest after the switch: %q, %v; want fired", r.Frame.Data, err)
	}
}

// A message that would create a channel past its group's limit is
// refused; one to a live channel is not.
func testChannelLimit(t *testing.T, e Env) {
	if _, err := appendMsg(t, e, "lim\x00a", "1", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := appendMsg(t, e, "lim\x00b", "1", 1); !errors.Is(err, store.ErrChannelLimit) {
		t.Fatalf("a second channel under a limit of one: %v; want the channel limit", err)
	}
	if _, err := appendMsg(t, e, "lim\x00a", "2", 1); err != nil {
		t.Fatalf("a live channel at its group's limit: %v", err)
	}
	if _, err := appendMsg(t, e, "other\x00b", "1", 1); err != nil {
		t.Fatalf("another group: %v", err)
	}
}

// A position past anything the log assigned is of another history.
func testFuture(t *testing.T, e Env) {
	key := "app\x00z"
	ps := publish(t, e, key, "1")
	far := rtm.Position{Epoch: ps[0].Epoch, Offset: ps[0].Offset + 1000}
	if _, _, err := e.Log.Subscribe(ctx(t), key, store.Start{Position: &far}); !errors.Is(err, store.ErrFuture) {
		t.Fatalf("subscribe far past the newest: %v; want a future position", err)
	}
}
