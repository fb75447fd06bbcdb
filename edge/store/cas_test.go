package store

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// TestAppendIfCompareAndSet: a conditional append is stored only at the
// channel's newest position, reports the message before it, and on a
// mismatch stores nothing (not even a channel).
func TestAppendIfCompareAndSet(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	h := s.Channel("kv")
	zero := rtm.Position{}
	stale := rtm.Position{Epoch: 1, Offset: 7}
	if _, p, err := h.AppendIf([]byte("x"), 0, &stale, nil); !errors.Is(err, ErrMismatch) || p.Found {
		t.Fatalf("CAS at %v on a missing channel: %+v, %v; want ErrMismatch, no prior", stale, p, err)
	}
	if s.Has("kv") {
		t.Fatal("a refused CAS created the channel")
	}
	p1, prior, err := h.AppendIf([]byte("one"), 0, &zero, nil)
	if err != nil || prior.Found {
		t.Fatalf("CAS at 0:0 on an empty channel: %v, %+v, %v", p1, prior, err)
	}
	p2, prior, err := h.AppendIf([]byte("two"), 0, &p1, nil)
	if err != nil || !prior.Found || prior.Position != p1 || string(prior.Data) != "one" {
		t.Fatalf("CAS at the newest %v: %v, %+v, %v", p1, p2, prior, err)
	}
	_, prior, err = h.AppendIf([]byte("three"), 0, &p1, nil)
	if !errors.Is(err, ErrMismatch) || prior.Position != p2 || string(prior.Data) != "two" {
		t.Fatalf("CAS at the stale %v: %+v, %v; want ErrMismatch naming %v", p1, prior, err, p2)
	}
	if f, _, _ := s.Read("kv", nil); string(f.Data) != "two" {
		t.Fatalf("after a refused CAS the newest is %q, want two", f.Data)
	}
}

// TestAppendIfRaces: of writers racing with the same expected position,
// exactly one wins each round, and every winner saw the message before
// its own.
func TestAppendIfRaces(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	h := s.Channel("kv")
	start, _ := h.Append([]byte("0"))
	const rounds, writers = 50, 4
	cur := start
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		wins := make(chan rtm.Position, writers)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				expect := cur
				pos, prior, err := h.AppendIf([]byte("v"), 0, &expect, nil)
				if err == nil {
					if prior.Position != expect {
						t.Errorf("winner's prior %v, want %v", prior.Position, expect)
					}
					wins <- pos
				} else if !errors.Is(err, ErrMismatch) {
					t.Errorf("AppendIf: %v", err)
				}
			}()
		}
		wg.Wait()
		close(wins)
		n := 0
		for p := range wins {
			n++
			cur = p
		}
		if n != 1 {
			t.Fatalf("round %d: %d winners, want 1", r, n)
		}
	}
}

// TestPurge: a purge drops the history (reads of it expire, the newest
// is gone), reports the message before it, and a cursor at the end reads
// on with the next message while one behind is out of sync.
func TestPurge(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	p1, _ := s.Append("c", []byte("one"))
	p2, _ := s.Append("c", []byte("two"))
	behind, err := s.Subscribe("c", Start{Position: &p1})
	if err != nil {
		t.Fatal(err)
	}
	defer behind.Close()
	atEnd, err := s.Subscribe("c", Start{})
	if err != nil {
		t.Fatal(err)
	}
	defer atEnd.Close()
	prior, err := s.Purge("c", nil)
	if err != nil || !prior.Found || prior.Position != p2 || string(prior.Data) != "two" {
		t.Fatalf("Purge: %+v, %v; want two at %v", prior, err, p2)
	}
	if _, found, _ := s.Read("c", nil); found {
		t.Fatal("the newest message survived the purge")
	}
	if _, _, err := s.Read("c", &p1); !errors.Is(err, ErrExpired) {
		t.Fatalf("read at %v after purge: %v, want ErrExpired", p1, err)
	}
	if _, err := behind.Read(nil, 1<<20); !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("cursor behind: %v, want ErrOutOfSync", err)
	}
	p3, _ := s.Append("c", []byte("three"))
	if p3.Epoch != p2.Epoch || p3.Offset != p2.Offset+1 {
		t.Fatalf("after purge the next message is at %v, want %v", p3, p2.Next())
	}
	fs, err := atEnd.Read(nil, 1<<20)
	if err != nil || len(fs) != 1 || string(fs[0].Data) != "three" {
		t.Fatalf("cursor at the end read %v, %v; want three", fs, err)
	}
}

// TestPurgeForgets: a purged channel nobody reads is forgotten, and a
// purge of a channel the store does not hold creates nothing.
func TestPurgeForgets(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	if p, err := s.Purge("none", nil); err != nil || p.Found || s.Has("none") {
		t.Fatalf("purge of nothing: %+v, %v, has %v", p, err, s.Has("none"))
	}
	s.Append("c", []byte("one"))
	if _, err := s.Purge("c", nil); err != nil {
		t.Fatal(err)
	}
	if s.Has("c") {
		t.Fatal("a purged channel without cursors was kept")
	}
	if st := s.Stats(); st.Blocks != 0 || st.Channels != 0 {
		t.Fatalf("after purge: %+v, want no blocks, no channels", st)
	}
}

// TestOnCreate: the hook hears of each channel the store makes, once, by
// an append or a subscribe, and may subscribe to it from there.
func TestOnCreate(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	var mu sync.Mutex
	var made []string
	var curs []*Cursor
	s.OnCreate(func(name string) {
		c, err := s.Subscribe(name, Start{HistoryCount: 1 << 30}) // from inside the hook
		mu.Lock()
		defer mu.Unlock()
		made = append(made, name)
		if err == nil {
			curs = append(curs, c)
		}
	})
	s.Append("a", []byte("1"))
	s.Append("a", []byte("2"))
	s.Channel("b").Append([]byte("3"))
	c, err := s.Subscribe("c", Start{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	s.OnCreate(nil)
	s.Append("d", []byte("4"))
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(made, want) {
		t.Fatalf("hook heard %v, want %v", made, want)
	}
	// The cursor opened in the hook, before the first append, reads it.
	fs, err := curs[0].Read(nil, 1<<20)
	if err != nil || len(fs) != 2 || string(fs[0].Data) != "1" {
		t.Fatalf("hook's cursor on a read %v, %v; want 1 and 2", fs, err)
	}
	for _, c := range curs {
		c.Close()
	}
}
