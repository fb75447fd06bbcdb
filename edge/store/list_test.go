package store

import (
	"fmt"
	"slices"
	"testing"
)

// TestChannelNames: names by prefix, in order, paged without loss or
// repetition, over every shard.
func TestChannelNames(t *testing.T) {
	t.Parallel()
	s := New(&Options{SweepInterval: -1})
	t.Cleanup(func() { s.Close() })
	var want []string
	for i := range 50 {
		name := fmt.Sprintf("a\x00room.%02d", i)
		want = append(want, name)
		if _, err := s.Append(name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range []string{"a\x00lobby", "b\x00room.01", "a\x00roo"} {
		if _, err := s.Append(other, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		limit int
	}{
		{name: "one page", limit: 100},
		{name: "exact pages", limit: 10},
		{name: "pages of 7", limit: 7},
		{name: "pages of 1", limit: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			after, pages := "", 0
			for {
				names, more := s.ChannelNames("a\x00room.", after, tt.limit)
				pages++
				if len(names) > tt.limit || (more && len(names) != tt.limit) {
					t.Fatalf("page %d: %d names, more %v, limit %d", pages, len(names), more, tt.limit)
				}
				got = append(got, names...)
				if !more {
					break
				}
				after = names[len(names)-1]
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %q, want %q", got, want)
			}
			if wantPages := (len(want) + tt.limit - 1) / tt.limit; pages != wantPages {
				t.Fatalf("%d pages, want %d", pages, wantPages)
			}
		})
	}
	if names, more := s.ChannelNames("none", "", 5); len(names) != 0 || more {
		t.Fatalf("no match: %q, %v", names, more)
	}
}
