package store

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestOrigin: a message appended with an origin reads back with it, by
// every read path (cursor, position, newest, history count), and its
// neighbours without one read back without it, across block boundaries.
func TestOrigin(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, &Options{BlockBytes: 96, FirstBlockBytes: 96})
	h := s.Channel("c")
	origins := []string{"", "ab.1", "", strings.Repeat("o", MaxOriginBytes), "x", ""}
	for i, o := range origins {
		if _, err := h.AppendFrom(o, payload(i, 10+i), 0); err != nil {
			t.Fatalf("AppendFrom %d: %v", i, err)
		}
	}
	check := func(t *testing.T, f Frame) {
		t.Helper()
		i := int(f.Offset - 1)
		if string(f.Origin) != origins[i] || (origins[i] == "") != (f.Origin == nil) {
			t.Errorf("offset %d: origin %q, want %q", f.Offset, f.Origin, origins[i])
		}
		if string(f.Data) != string(payload(i, 10+i)) {
			t.Errorf("offset %d: data %q, want %q", f.Offset, f.Data, payload(i, 10+i))
		}
	}
	t.Run("cursor", func(t *testing.T) {
		c := mustSubscribe(t, s, "c", Start{HistoryCount: len(origins)})
		fs, err := c.Read(make([]Frame, 0, 2), 0) // a reused dst: origins must not linger
		for len(fs) > 0 && err == nil {
			for _, f := range fs {
				check(t, f)
			}
			fs, err = c.Read(fs[:0], 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Position().Offset; got != uint64(len(origins))+1 {
			t.Errorf("cursor at %d, want %d", got, len(origins)+1)
		}
	})
	t.Run("position", func(t *testing.T) {
		epoch, _ := s.Peek("c")
		for i := range origins {
			p := pos(epoch.Epoch, uint64(i+1))
			f, found, err := s.Read("c", p)
			if err != nil || !found {
				t.Fatalf("Read %v: %v, %v", p, found, err)
			}
			check(t, f)
		}
	})
	t.Run("newest", func(t *testing.T) {
		f, found, err := s.Read("c", nil)
		if err != nil || !found {
			t.Fatalf("Read newest: %v, %v", found, err)
		}
		check(t, f)
	})
}

// TestOriginAppendPaths: AppendAtFrom and AppendIfFrom keep the origin
// too, and an origin past MaxOriginBytes is refused with nothing stored.
func TestOriginAppendPaths(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	h := s.Channel("c")
	if _, err := h.AppendAtFrom(5, time.Unix(1_700_000_000, 0), "at", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.AppendIfFrom("if", []byte("b"), 0, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.AppendFrom(strings.Repeat("o", MaxOriginBytes+1), []byte("c"), 0); !errors.Is(err, ErrOriginTooLong) {
		t.Fatalf("a long origin: %v, want ErrOriginTooLong", err)
	}
	c := mustSubscribe(t, s, "c", Start{HistoryCount: 10})
	fs, err := c.Read(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Origins() {
		t.Error("Origins after reading frames with origins = false")
	}
	if _, err := s.Append("plain", []byte("p")); err != nil {
		t.Fatal(err)
	}
	pc := mustSubscribe(t, s, "plain", Start{HistoryCount: 1})
	if got, err := pc.Read(nil, 0); err != nil || len(got) != 1 || pc.Origins() {
		t.Errorf("a frame without an origin: %v, %v, Origins %v; want one frame, Origins false", got, err, pc.Origins())
	}
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Origin)+"="+string(f.Data))
	}
	if strings.Join(got, " ") != "at=a if=b" {
		t.Errorf("frames %q, want [at=a if=b]", got)
	}
}
