package view_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/view"
)

// huge is a 64 KiB string: the largest a message can carry.
var huge = strings.Repeat("abcdefgh", 8<<10)

// TestBudgetProtocolExamples: the filters the protocol's documentation
// gives as examples, and a heavier one, stay within the Budget on a
// message whose fields are 64 KiB strings, and give their results.
func TestBudgetProtocolExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, filter string
		msg          M
		keep         bool
	}{
		{"equal", "select * from `animals` where who = 'zebra'", M{"who": huge}, false},
		{"prefix", "SELECT * FROM `animals` WHERE who LIKE 'z%'", M{"who": "z" + huge}, true},
		{"not equal", "select * from `ch` where test != 2", M{"test": huge}, true},
		{"or", "select * from `ch` where object.param >= 1 OR object.id == 0", M{"object": M{"param": huge, "id": int64(0)}}, true},
		{"two likes", "select * from `news` where title LIKE \"%Japan%\" OR title LIKE \"%Korea%\"", M{"title": huge}, false},
		{"project", "select test from `ch`", M{"test": huge}, true},
		{"100 likes", "select * from ch where" + strings.Repeat(" s LIKE '%x_y%' OR", 99) + " s LIKE '%abc%h'", M{"s": huge}, true},
		{"lower", "select * from ch where lower(s) = upper(s) or length(s) > 1", M{"s": huge}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := compile(t, tt.filter).NewEvaluator()
			_, keep := e.Append(nil, enc(t, tt.msg))
			if err := e.Err(); err != nil || keep != tt.keep {
				t.Fatalf("kept %v, err %v; want %v, nil", keep, err, tt.keep)
			}
		})
	}
	a := compile(t, "SELECT count(*) AS count, who FROM `animals` GROUP BY who").NewAggregate()
	if !a.Add(enc(t, M{"who": huge})) || a.Err() != nil {
		t.Fatalf("aggregate: %v", a.Err())
	}
	if got := flush(t, a); len(got) != 1 || a.Err() != nil {
		t.Fatalf("aggregate flush: %d results, %v", len(got), a.Err())
	}
}

// TestBudgetExceeded: a message that would cost more than the Budget is
// dropped with ErrBudget, whatever spends it; the next message is
// evaluated afresh.
func TestBudgetExceeded(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("a", 30_000)
	tests := []struct {
		name, filter string
		msg          M
	}{
		{"long wild", "SELECT * FROM ch WHERE s LIKE p", M{"s": s, "p": worstLike[0].pattern}},
		{"a_a_b", "SELECT * FROM ch WHERE s LIKE p", M{"s": s, "p": worstLike[3].pattern}},
		{"1300 terms", "SELECT * FROM ch WHERE s LIKE p" + strings.Repeat(" OR s LIKE p", 1299), M{"s": s, "p": "%" + strings.Repeat("a_", 40) + "b%"}},
		{"functions", "SELECT * FROM ch WHERE" + strings.Repeat(" lower(s) = 'x' OR", 299) + " length(s) = 1", M{"s": huge}},
		{"projection", "SELECT s LIKE p AS m FROM ch", M{"s": s, "p": worstLike[0].pattern}},
		{"not like", "SELECT * FROM ch WHERE s NOT LIKE p", M{"s": s, "p": worstLike[0].pattern}},
		{"projected bytes", "SELECT s AS a0" + projectCopies(300) + " FROM ch", M{"s": huge}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := compile(t, tt.filter).NewEvaluator()
			if out, keep := e.Append([]byte("x"), enc(t, tt.msg)); keep || string(out) != "x" || !errors.Is(e.Err(), view.ErrBudget) {
				t.Fatalf("kept %v (%q), err %v; want dropped with ErrBudget", keep, out, e.Err())
			}
			if e.Match(enc(t, M{"s": "ab", "p": "a%"})); e.Err() != nil {
				t.Fatalf("the next message: %v", e.Err())
			}
		})
	}
}

// TestBudgetAggregate: an aggregate's Add of a message past the Budget
// is not counted and Err says so from then on.
func TestBudgetAggregate(t *testing.T) {
	t.Parallel()
	a := compile(t, "SELECT count(*) AS n FROM ch WHERE s LIKE p").NewAggregate()
	if a.Add(enc(t, M{"s": strings.Repeat("a", 30_000), "p": worstLike[0].pattern})) || !errors.Is(a.Err(), view.ErrBudget) {
		t.Fatalf("counted, or err %v", a.Err())
	}
	a.Add(enc(t, M{"s": "ab", "p": "a%"}))
	if !errors.Is(a.Err(), view.ErrBudget) {
		t.Fatalf("err %v after a good message; want ErrBudget still", a.Err())
	}
	g := compile(t, "SELECT count(*) AS n FROM ch GROUP BY s LIKE p").NewAggregate()
	if g.Add(enc(t, M{"s": strings.Repeat("a", 30_000), "p": worstLike[0].pattern})) || !errors.Is(g.Err(), view.ErrBudget) {
		t.Fatalf("group by: counted, or err %v", g.Err())
	}
}

// projectCopies is n more items of a select list, each the field s.
func projectCopies(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, ", s AS a%d", i+1)
	}
	return b.String()
}
