package view_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// gen makes random messages and expressions over a few fields, so that
// expressions meet fields of every type, missing ones included.
type gen struct{ r *rand.Rand }

var fieldPaths = [][]string{{"a"}, {"b"}, {"s"}, {"m", "x"}, {"m", "y"}, {"missing"}, {"m"}}

var strs = []string{"", "a", "ab", "B", "ba%", "\u00e9t\u00e9", "Zebra"}

func (g gen) scalar() any {
	switch g.r.IntN(9) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return int64(g.r.IntN(7) - 3)
	case 3:
		return []int64{math.MaxInt64, math.MinInt64, 1 << 62, -1 << 62}[g.r.IntN(4)]
	case 4:
		return []float64{-1.5, 0.5, 2.0, 2.5, 1e300, math.Copysign(0, -1)}[g.r.IntN(6)]
	case 5:
		return []byte(strs[g.r.IntN(len(strs))])
	case 6:
		return []any{int64(1), "a"}[:g.r.IntN(3)]
	}
	return strs[g.r.IntN(len(strs))]
}

func (g gen) message() map[string]any {
	m := map[string]any{}
	for _, k := range []string{"a", "b", "s"} {
		if g.r.IntN(6) > 0 {
			m[k] = g.scalar()
		}
	}
	switch g.r.IntN(3) {
	case 0:
		m["m"] = map[string]any{"x": g.scalar(), "y": g.scalar()}
	case 1:
		m["m"] = g.scalar()
	}
	return m
}

func (g gen) literal() expr {
	type lit struct {
		sql string
		v   any
	}
	lits := []lit{{"null", nil}, {"true", true}, {"false", false}, {"0", int64(0)}, {"2", int64(2)}, {"-3", int64(-3)},
		{"9223372036854775807", int64(math.MaxInt64)}, {"0.5", 0.5}, {"2.0", 2.0}, {"''", ""}, {"'a'", "a"}, {"'B'", "B"},
		{"\"ab\"", "ab"}, {"'it''s'", "it's"}}
	l := lits[g.r.IntN(len(lits))]
	return expr{l.sql, func(map[string]any) any { return l.v }}
}

func (g gen) field() expr {
	p := fieldPaths[g.r.IntN(len(fieldPaths))]
	return expr{strings.Join(p, "."), func(m map[string]any) any { return refField(m, p) }}
}

// expr is a random expression nested at most depth deep.
func (g gen) expr(depth int) expr {
	if depth == 0 || g.r.IntN(4) == 0 {
		if g.r.IntN(2) == 0 {
			return g.literal()
		}
		return g.field()
	}
	a, b := g.expr(depth-1), g.expr(depth-1)
	bin := func(sql string, f func(x, y any) any) expr {
		return expr{"(" + a.sql + " " + sql + " " + b.sql + ")", func(m map[string]any) any { return f(a.eval(m), b.eval(m)) }}
	}
	fn := func(name string, f func(x any) any) expr {
		return expr{name + "(" + a.sql + ")", func(m map[string]any) any { return f(a.eval(m)) }}
	}
	switch g.r.IntN(22) {
	case 0:
		return bin("=", refEq)
	case 1:
		return bin("!=", func(x, y any) any { return refNot(refEq(x, y)) })
	case 2, 3:
		o := []string{"<", "<=", ">", ">="}[g.r.IntN(4)]
		return bin(o, func(x, y any) any { return refOrder(o, x, y) })
	case 4:
		return bin("AND", refAnd)
	case 5:
		return bin("OR", refOr)
	case 6:
		return expr{"(NOT " + a.sql + ")", func(m map[string]any) any { return refNot(a.eval(m)) }}
	case 7, 8:
		o := []string{"+", "-", "*", "/", "%"}[g.r.IntN(5)]
		return bin(o, func(x, y any) any { return refArith(o, x, y) })
	case 9:
		return expr{"(-" + a.sql + ")", func(m map[string]any) any { return refNeg(a.eval(m)) }}
	case 10:
		p := []string{"a%", "%b", "_", "%", "a_", "%\u00e9%", "__%"}[g.r.IntN(7)]
		return expr{"(" + a.sql + " LIKE '" + p + "')", func(m map[string]any) any { return refLike(a.eval(m), p) }}
	case 11:
		c := g.expr(depth - 1)
		return expr{"(" + a.sql + " IN (" + b.sql + ", " + c.sql + "))", func(m map[string]any) any {
			x := a.eval(m)
			if x == nil {
				return nil
			}
			return refOr(refEq(x, b.eval(m)), refEq(x, c.eval(m)))
		}}
	case 12:
		return expr{"(" + a.sql + " IS NULL)", func(m map[string]any) any { return a.eval(m) == nil }}
	case 13:
		c := g.expr(depth - 1)
		return expr{"(" + a.sql + " BETWEEN " + b.sql + " AND " + c.sql + ")", func(m map[string]any) any {
			x := a.eval(m)
			return refAnd(refOrder(">=", x, b.eval(m)), refOrder("<=", x, c.eval(m)))
		}}
	case 14:
		return fn("lower", func(x any) any { return refCase(x, false) })
	case 15:
		return fn("upper", func(x any) any { return refCase(x, true) })
	case 16:
		return fn("length", refLength)
	case 17:
		return expr{"substr(" + a.sql + ", " + b.sql + ", 2)", func(m map[string]any) any { return refSubstr(a.eval(m), b.eval(m), int64(2)) }}
	case 18:
		return fn("abs", refAbs)
	case 19:
		f := []struct {
			name string
			f    func(float64) float64
		}{{"floor", math.Floor}, {"ceil", math.Ceil}, {"round", math.Round}}[g.r.IntN(3)]
		return fn(f.name, func(x any) any { return refIntegral(x, f.f) })
	case 20:
		return expr{"coalesce(" + a.sql + ", " + b.sql + ")", func(m map[string]any) any {
			if x := a.eval(m); x != nil {
				return x
			}
			return b.eval(m)
		}}
	}
	return expr{"(" + a.sql + ")", a.eval}
}

// TestDifferential compares view with the reference evaluator on random
// messages and expressions: the value of each expression as a
// projection, and whether it keeps the message as a WHERE.
func TestDifferential(t *testing.T) {
	t.Parallel()
	g := gen{rand.New(rand.NewPCG(1, 2))}
	const exprs, msgs = 3000, 8
	for range exprs {
		e := g.expr(3)
		proj := compile(t, "SELECT "+e.sql+" AS r FROM ch")
		where := compile(t, "SELECT * FROM ch WHERE "+e.sql)
		for range msgs {
			m := g.message()
			want := e.eval(m)
			got, ok := apply(t, proj, m)
			if !ok {
				t.Fatalf("%s dropped %v", e.sql, m)
			}
			if r := got.(map[string]any)["r"]; !same(r, want) {
				t.Fatalf("%s on %v\n got %#v\nwant %#v", e.sql, fmt.Sprint(m), r, want)
			}
			if _, kept := apply(t, where, m); kept != (want == true) {
				t.Fatalf("WHERE %s on %v: kept %v, value %#v", e.sql, m, kept, want)
			}
		}
	}
}
