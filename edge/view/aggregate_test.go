package view_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/edge/view"
)

// animals is the input of the aggregate tests, in order.
var animals = []any{
	M{"who": "zebra", "n": int64(3), "w": 1.5, "tag": "b"},
	M{"who": "lion", "n": int64(10), "tag": nil},
	M{"who": "zebra", "n": int64(5), "w": int64(2), "extra": true},
	"not a map",
	M{"who": "zebra", "n": "x", "tag": "a"},
	M{"who": nil, "n": int64(1)},
}

func TestAggregates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		statement string
		want      []any
	}{
		{"count", "SELECT count(*) AS count, who FROM animals GROUP BY who",
			[]any{M{"count": int64(3), "who": "zebra"}, M{"count": int64(1), "who": "lion"}, M{"count": int64(1), "who": nil}}},
		{"no group by", "SELECT count(*) AS c, count(tag) AS t, count(nope) AS x FROM animals",
			[]any{M{"c": int64(5), "t": int64(2), "x": int64(0)}}},
		{"sum and avg", "SELECT sum(n) AS s, avg(n) AS a, sum(w) AS sw, avg(w) AS aw, sum(nope) AS none FROM animals WHERE who = 'zebra'",
			[]any{M{"s": int64(8), "a": 4.0, "sw": 3.5, "aw": 1.75, "none": nil}}},
		{"min and max", "SELECT min(n) AS lo, max(n) AS hi, min(tag) AS t, max(tag) AS u FROM animals",
			[]any{M{"lo": int64(1), "hi": "x", "t": "a", "u": "b"}}},
		{"first and last", "SELECT first_value(tag) AS f, last_value(tag) AS l, first_value(n) AS fn FROM animals WHERE who IS NOT NULL",
			[]any{M{"f": "b", "l": "a", "fn": int64(3)}}},
		{"last keeps null", "SELECT last_value(tag) AS l FROM animals WHERE who = 'lion'",
			[]any{M{"l": nil}}},
		{"plain field is the last message's", "SELECT n, count(*) AS c FROM animals WHERE who = 'zebra'",
			[]any{M{"n": "x", "c": int64(3)}}},
		{"expression over aggregates", "SELECT sum(n) / count(*) AS r, round(avg(w)) AS w FROM animals WHERE who = 'zebra'",
			[]any{M{"r": 8.0 / 3, "w": int64(2)}}},
		{"group by expression", "SELECT count(*) AS c FROM animals GROUP BY n > 4",
			[]any{M{"c": int64(2)}, M{"c": int64(2)}, M{"c": int64(1)}}},
		{"group by two", "SELECT who, tag, count(*) AS c FROM animals WHERE who = 'zebra' GROUP BY who, tag",
			[]any{M{"who": "zebra", "tag": "b", "c": int64(1)}, M{"who": "zebra", "tag": nil, "c": int64(1)}, M{"who": "zebra", "tag": "a", "c": int64(1)}}},
		{"merge", "SELECT merge(*) FROM animals WHERE who = 'zebra'",
			[]any{M{"who": "zebra", "n": "x", "w": int64(2), "tag": "a", "extra": true}}},
		{"merge with items", "SELECT merge(*), count(*) AS n FROM animals WHERE who = 'zebra'",
			[]any{M{"who": "zebra", "n": int64(3), "w": int64(2), "tag": "a", "extra": true}}},
		{"merge named", "SELECT merge(*) AS m, who FROM animals WHERE who = 'lion'",
			[]any{M{"m": M{"who": "lion", "n": int64(10), "tag": nil}, "who": "lion"}}},
		{"star per group", "SELECT * FROM animals GROUP BY who",
			[]any{animals[4], animals[1], animals[5]}},
		{"where drops all", "SELECT count(*) AS c FROM animals WHERE who = 'cat'", nil},
		{"group by alone", "SELECT who FROM animals GROUP BY who",
			[]any{M{"who": "zebra"}, M{"who": "lion"}, M{"who": nil}}},
		{"default names", "SELECT count(*), MAX(n) FROM animals WHERE who = 'lion'",
			[]any{M{"count(*)": int64(1), "MAX(n)": int64(10)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := compile(t, tt.statement)
			if !v.Aggregates() {
				t.Fatal("not an aggregate view")
			}
			if _, ok := v.Append(nil, enc(t, animals[0])); ok {
				t.Fatal("Append kept a message of an aggregate view")
			}
			a := v.NewAggregate()
			for _, m := range animals {
				a.Add(enc(t, m))
			}
			if got := flush(t, a); !same(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
			if got := flush(t, a); got != nil {
				t.Fatalf("a period without input gave %#v", got)
			}
		})
	}
}

// TestPeriods checks that each Flush ends a period: the next starts
// empty, groups come back when their messages do, and a period without
// input emits nothing.
func TestPeriods(t *testing.T) {
	t.Parallel()
	v := compile(t, "SELECT who, count(*) AS c, first_value(n) AS f FROM ch GROUP BY who")
	a := v.NewAggregate()
	add := func(who string, n int64) {
		t.Helper()
		if !a.Add(enc(t, M{"who": who, "n": n})) {
			t.Fatalf("%s not counted", who)
		}
	}
	add("a", 1)
	add("b", 2)
	add("a", 3)
	if got, want := flush(t, a), []any{M{"who": "a", "c": int64(2), "f": int64(1)}, M{"who": "b", "c": int64(1), "f": int64(2)}}; !same(got, want) {
		t.Fatalf("period 1: %#v", got)
	}
	if got := flush(t, a); got != nil {
		t.Fatalf("empty period: %#v", got)
	}
	add("b", 4)
	if got, want := flush(t, a), []any{M{"who": "b", "c": int64(1), "f": int64(4)}}; !same(got, want) {
		t.Fatalf("period 3: %#v", got)
	}
	if a.Add(enc(t, "scalar")) {
		t.Fatal("a scalar counted")
	}
}

// TestFlushKeepsResults checks that the messages of one Flush stay
// intact after more periods, since the edge may hold them.
func TestFlushKeepsResults(t *testing.T) {
	t.Parallel()
	v := compile(t, "SELECT lower(last_value(s)) AS s FROM ch GROUP BY g")
	a := v.NewAggregate()
	a.Add(enc(t, M{"s": "ONE", "g": int64(1)}))
	a.Add(enc(t, M{"s": "TWO", "g": int64(2)}))
	first := a.Flush(nil)
	a.Add(enc(t, M{"s": "THREE", "g": int64(1)}))
	a.Flush(nil)
	if got := []any{dec(t, first[0]), dec(t, first[1])}; !same(got, []any{M{"s": "one"}, M{"s": "two"}}) {
		t.Fatalf("got %#v", got)
	}
}

func TestGroupsBounded(t *testing.T) {
	t.Parallel()
	v := compile(t, "SELECT count(*) AS c FROM ch GROUP BY k")
	a := v.NewAggregate()
	for i := range view.MaxGroups {
		if !a.Add(enc(t, M{"k": int64(i)})) {
			t.Fatalf("group %d refused", i)
		}
	}
	if a.Add(enc(t, M{"k": -1.0})) {
		t.Fatal("one group past MaxGroups counted")
	}
	if !a.Add(enc(t, M{"k": 5.0})) {
		t.Fatal("5.0 is the group of 5, which exists")
	}
	if n := len(a.Flush(nil)); n != view.MaxGroups {
		t.Fatalf("%d groups", n)
	}
}

func TestSumOverflow(t *testing.T) {
	t.Parallel()
	v := compile(t, "SELECT sum(n) AS s FROM ch")
	a := v.NewAggregate()
	for _, n := range []any{int64(1 << 62), int64(1 << 62), int64(1 << 62), 0.5} {
		a.Add(enc(t, M{"n": n}))
	}
	if got := flush(t, a); !same(got, []any{M{"s": 3*float64(1<<62) + 0.5}}) {
		t.Fatalf("got %#v", got)
	}
}

func TestSimpleViewAggregate(t *testing.T) {
	t.Parallel()
	a := compile(t, "SELECT * FROM ch").NewAggregate()
	if a.Add(enc(t, M{"a": int64(1)})) || a.Flush(nil) != nil {
		t.Fatal("a simple view aggregated")
	}
}

// TestConcurrent runs Add, Flush and the View's own evaluation from
// several goroutines at once, for the race detector, and checks that no
// message is lost or counted twice across the periods.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	v := compile(t, "SELECT count(*) AS c, sum(n) AS s FROM ch WHERE n > 0")
	a := v.NewAggregate()
	m := enc(t, M{"n": int64(2)})
	const writers, each = 4, 500
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if !a.Add(m) || !v.Match(m) {
					t.Error("not counted")
					return
				}
				if _, ok := v.Append(nil, m); ok {
					t.Error("Append of an aggregate view")
					return
				}
			}
		})
	}
	var total int64
	var flushed [][]byte // decoded on the test's goroutine, which may Fatal
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // the period's timer, flushing as fast as it can
		defer close(done)
		for {
			flushed = a.Flush(flushed)
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-done
	for _, r := range a.Flush(flushed) {
		total += dec(t, r).(M)["c"].(int64)
	}
	if total != writers*each {
		t.Fatalf("counted %d, want %d", total, writers*each)
	}
}

func TestMergeBounded(t *testing.T) {
	t.Parallel()
	a := compile(t, "SELECT merge(*) FROM ch").NewAggregate()
	for i := range 1100 {
		a.Add(enc(t, M{fmt.Sprintf("k%04d", i): int64(i)}))
	}
	a.Add(enc(t, M{"k0000": "again"}))
	got := flush(t, a)
	m := got[0].(M)
	if len(m) != 1024 || m["k0000"] != "again" || m["k1023"] != int64(1023) || m["k1024"] != nil {
		t.Fatalf("%d fields, k0000 %v, k1023 %v", len(m), m["k0000"], m["k1023"])
	}
}
