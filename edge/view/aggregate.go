package view

import (
	"math"
	"slices"
	"sync"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// MaxGroups is how many groups an Aggregate holds in one period: a
// message that would start one more is not counted (Add is false), so
// that a GROUP BY on a field of ever-new values cannot grow the edge's
// memory without bound.
const MaxGroups = 10_000

// Aggregate is the state of an aggregate view over one period: the edge
// keeps one per view (shared by the view's subscribers), Adds every
// message of the channel to it and Flushes it at the end of each period.
// It is safe for concurrent use: Add and Flush may come from different
// goroutines (the channel's reader and the period's timer).
type Aggregate struct {
	mu     sync.Mutex // guards every field below
	v      *View
	e      *Evaluator
	groups map[string]*group // by the msgpack of their GROUP BY values
	order  []*group          // in the order of their first message
	key    []byte
	err    error // ErrBudget once an Add or a Flush gave up
}

// group is the running state of one group.
type group struct {
	accs []acc
	last []byte // the last message, for SELECT * ... GROUP BY
}

// acc is the running state of one aggregate of a group.
type acc struct {
	n      int64   // COUNT; the numbers seen by SUM and AVG
	isum   int64   // their sum while it is an exact integer
	fsum   float64 // their sum once a float or an overflow came
	float  bool    // whether fsum holds the sum
	has    bool    // whether val holds a value
	val    []byte  // MIN, MAX, FIRST_VALUE, LAST_VALUE: the value, msgpack
	fields map[string]*[]byte
}

// NewAggregate returns an empty period of an aggregate view. For a
// simple view, whose Aggregates is false, its Add counts nothing.
func (v *View) NewAggregate() *Aggregate {
	return &Aggregate{v: v, e: v.NewEvaluator(), groups: map[string]*group{}}
}

// Add takes msg, a msgpack message of the view's channel, into the
// period: it reports whether msg counted (the view's WHERE kept it and
// its group exists or could be made). A message that would cost more
// than Budget is not counted, and Err says so from then on: the period
// may hold part of it, and the caller should give the Aggregate up.
func (a *Aggregate) Add(msg []byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.v
	if !v.aggregate || !a.e.Match(msg) {
		if a.e.Err() != nil {
			a.err = a.e.Err()
		}
		return false
	}
	a.key = a.key[:0]
	for _, n := range v.groupBy {
		a.key = appendKey(a.key, a.e.eval(n))
	}
	if a.e.Err() != nil {
		a.err = a.e.Err()
		return false
	}
	g := a.groups[string(a.key)]
	if g == nil {
		if len(a.groups) >= MaxGroups {
			return false
		}
		g = &group{accs: make([]acc, len(v.aggs))}
		a.groups[string(a.key)] = g
		a.order = append(a.order, g)
	}
	for i, s := range v.aggs {
		g.accs[i].add(a.e, s)
	}
	if v.star {
		g.last = append(g.last[:0], msg...)
	}
	if a.e.Err() != nil {
		a.err = a.e.Err()
		return false
	}
	return true
}

// Err returns ErrBudget once an Add gave up on a message or a Flush on
// its groups because they would cost more than Budget, else nil.
func (a *Aggregate) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// appendKey appends a GROUP BY value: a float with no fraction as the
// integer it equals, so that 1 and 1.0 are one group, as in SQL.
func appendKey(dst []byte, x value) []byte {
	if x.k == kFloat && x.f == math.Trunc(x.f) && math.Abs(x.f) < 1<<63 {
		x = intValue(int64(x.f))
	}
	return appendValue(dst, x)
}

// Flush ends the period: it appends to dst one msgpack message per group
// (in the order of each group's first message), each in a slice of its
// own that the caller may keep, and empties the Aggregate for the next
// period. A period that counted nothing appends nothing. The groups'
// results share one Budget: past it, their values are null and Err says
// so.
func (a *Aggregate) Flush(dst [][]byte) [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.e.left = Budget
	defer func() {
		if a.e.Err() != nil {
			a.err = a.e.Err()
		}
	}()
	var buf []byte
	for _, g := range a.order {
		start := len(buf)
		buf = a.appendGroup(buf, g)
		dst = append(dst, buf[start:len(buf):len(buf)])
	}
	clear(a.groups)
	clear(a.order)
	a.order = a.order[:0]
	return dst
}

// appendGroup appends the result message of a group.
func (a *Aggregate) appendGroup(dst []byte, g *group) []byte {
	v, e := a.v, a.e
	if v.star {
		return append(dst, g.last...)
	}
	e.scratch = e.scratch[:0]
	for i, s := range v.aggs {
		e.aggs[i] = g.accs[i].result(s.fn, &e.scratch)
	}
	var spread []string
	if v.spread >= 0 {
		for k := range g.accs[v.spread].fields {
			if _, named := slices.BinarySearchFunc(v.items, k, byName); !named {
				spread = append(spread, k)
			}
		}
		slices.Sort(spread)
	}
	dst = wire.AppendMapHead(dst, len(v.items)+len(spread))
	items := v.items
	for len(items) > 0 || len(spread) > 0 {
		if len(spread) == 0 || len(items) > 0 && items[0].name < spread[0] {
			dst = wire.AppendString(dst, items[0].name)
			dst = appendValue(dst, e.eval(items[0].expr))
			items = items[1:]
			continue
		}
		dst = wire.AppendString(dst, spread[0])
		dst = append(dst, *g.accs[v.spread].fields[spread[0]]...)
		spread = spread[1:]
	}
	return dst
}

func byName(it item, name string) int {
	switch {
	case it.name < name:
		return -1
	case it.name > name:
		return 1
	}
	return 0
}
