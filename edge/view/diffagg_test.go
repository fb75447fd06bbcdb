package view_test

import (
	"math/rand/v2"
	"testing"
)

// refAcc is the reference of one group's aggregates of a field.
type refAcc struct {
	count, countA, n int64
	isum             int64
	fsum             float64
	float            bool
	lo, hi           any
	first, last      any
	seen             bool
}

func refRank(v any) int {
	switch v.(type) {
	case bool:
		return 1
	case int64, float64:
		return 2
	case string:
		return 3
	case []byte:
		return 4
	}
	return 0
}

func refLess(a, b any) bool {
	if ra, rb := refRank(a), refRank(b); ra != rb {
		return ra < rb
	}
	c, _, _ := refCompare(a, b)
	return c < 0
}

func (r *refAcc) add(a any) {
	r.count++
	if !r.seen {
		r.first, r.seen = a, true
	}
	r.last = a
	if a != nil {
		r.countA++
	}
	r.addNumber(a)
	if refRank(a) == 0 {
		return
	}
	if r.lo == nil || refLess(a, r.lo) {
		r.lo = a
	}
	if r.hi == nil || refLess(r.hi, a) {
		r.hi = a
	}
}

// addNumber sums exactly in integers until a float or an overflow comes,
// then in floats from there on.
func (r *refAcc) addNumber(a any) {
	if !isNum(a) {
		return
	}
	r.n++
	if i, ok := a.(int64); ok && !r.float {
		if s, ok := refArith("+", r.isum, i).(int64); ok {
			r.isum = s
			return
		}
	}
	if !r.float {
		r.float, r.fsum = true, float64(r.isum)
	}
	r.fsum += toF(a)
}

func (r *refAcc) result(g any) map[string]any {
	m := map[string]any{"g": g, "c": r.count, "ca": r.countA, "lo": r.lo, "hi": r.hi, "f": r.first, "l": r.last, "s": nil, "av": nil}
	switch {
	case r.n == 0:
	case r.float:
		m["s"], m["av"] = r.fsum, r.fsum/float64(r.n)
	default:
		m["s"], m["av"] = r.isum, float64(r.isum)/float64(r.n)
	}
	return m
}

// TestAggregateDifferential compares the aggregates of view with the
// reference over random periods of random messages.
func TestAggregateDifferential(t *testing.T) {
	t.Parallel()
	g := gen{rand.New(rand.NewPCG(3, 4))}
	v := compile(t, "SELECT g, count(*) AS c, count(a) AS ca, sum(a) AS s, avg(a) AS av, min(a) AS lo, max(a) AS hi, first_value(a) AS f, last_value(a) AS l FROM ch WHERE a IS NOT NULL OR g = 'keep' GROUP BY g")
	a := v.NewAggregate()
	keys := []any{"x", "keep", int64(1), 1.0, nil}
	for range 300 {
		groups := map[any]*refAcc{}
		var order []any
		for range g.r.IntN(12) {
			m := map[string]any{}
			gk := keys[g.r.IntN(len(keys))]
			if gk != nil {
				m["g"] = gk
			}
			if f, ok := gk.(float64); ok {
				gk = int64(f) // 1.0 is the group of 1
			}
			if g.r.IntN(5) > 0 {
				m["a"] = g.scalar()
			}
			if av := refNumber(m["a"]); av == nil && gk != "keep" {
				a.Add(enc(t, m))
				continue
			}
			r := groups[gk]
			if r == nil {
				r = &refAcc{}
				groups[gk] = r
				order = append(order, gk)
			}
			r.add(refNumber(m["a"]))
			a.Add(enc(t, m))
		}
		got := flush(t, a)
		if len(got) != len(order) {
			t.Fatalf("%d groups, want %d", len(got), len(order))
		}
		for i, k := range order {
			want := groups[k].result(got[i].(map[string]any)["g"])
			if refNumber(want["g"]) != nil && refEq(refNumber(want["g"]), k) != true {
				t.Fatalf("group %d is %v, want %v", i, want["g"], k)
			}
			if !same(got[i], want) {
				t.Fatalf("group %v\n got %#v\nwant %#v", k, got[i], want)
			}
		}
	}
}
