package view

import (
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// View is a compiled statement. It is immutable and safe for concurrent
// use: the edge compiles a statement once and evaluates it once per
// message for every subscriber of that statement.
type View struct {
	statement string
	channel   string
	aggregate bool
	star      bool // SELECT *: a simple view's message as it is; an aggregate view's group's last message
	where     *node
	items     []item // sorted by name, without the spread MERGE(*)
	groupBy   []*node
	aggs      []aggSpec
	spread    int  // the aggregate of the unnamed MERGE(*) whose fields the result takes; -1 if none
	merges    bool // MERGE(*) copies every field: load checks all of the message
	root      pathNode
	slots     int
	pool      sync.Pool // of *Evaluator, for Match and Append
}

// Compile parses and checks a statement. A statement that is not valid
// gives an *Error naming the fault and its column, which the edge sends
// as invalid_filter.
func Compile(statement string) (*View, error) {
	st, err := parse(statement)
	if err != nil {
		return nil, err
	}
	return compile(statement, st)
}

// Statement returns the text the view was compiled from.
func (v *View) Statement() string { return v.statement }

// Channel returns the channel of the FROM clause, unquoted.
func (v *View) Channel() string { return v.channel }

// Aggregates reports whether the view aggregates (an aggregate function
// in the select list, or GROUP BY): its results come from an Aggregate's
// Flush at the end of each period, not from Append.
func (v *View) Aggregates() bool { return v.aggregate }

// SelectsAll reports whether the view is a simple SELECT *: a message
// it keeps is delivered as it is, so the edge may send the encodings it
// already holds after Match instead of Append's copy.
func (v *View) SelectsAll() bool { return v.star && !v.aggregate }

// Match reports whether the view keeps msg, a msgpack message: msg is a
// valid map and the WHERE clause is true for it. It is what Append and
// Aggregate.Add test first.
func (v *View) Match(msg []byte) bool {
	e := v.get()
	ok := e.Match(msg)
	v.pool.Put(e)
	return ok
}

// Append evaluates a simple view on msg and appends the result, in
// msgpack, to dst: msg itself for SELECT *, else a map of the select
// list's fields. It returns dst unchanged and false when the view drops
// msg (see Match), and always for an aggregate view.
func (v *View) Append(dst, msg []byte) ([]byte, bool) {
	e := v.get()
	dst, ok := e.Append(dst, msg)
	v.pool.Put(e)
	return dst, ok
}

func (v *View) get() *Evaluator {
	if e, ok := v.pool.Get().(*Evaluator); ok {
		return e
	}
	return v.NewEvaluator()
}

// Evaluator evaluates a view with buffers of its own; it is what View's
// methods take from a pool. A caller evaluating from one goroutine may
// keep one and save the pool's cost. It is not safe for concurrent use.
type Evaluator struct {
	v       *View
	slots   []span // where the loaded message holds each field
	msg     []byte // the loaded message
	scratch []byte // strings computed for this message (lower, upper)
	aggs    []value
	sc      wire.Scanner
	left    int // work units left of the Budget of the message loaded; below 0: given up
}

// NewEvaluator returns an Evaluator of v.
func (v *View) NewEvaluator() *Evaluator {
	return &Evaluator{v: v, slots: make([]span, v.slots), aggs: make([]value, len(v.aggs))}
}

// Match is View.Match. It is false too when the message would cost
// more than Budget; Err then says so.
func (e *Evaluator) Match(msg []byte) bool {
	if !e.load(msg) {
		return false
	}
	if e.v.where == nil {
		return true
	}
	return e.test(e.v.where) == tTrue && e.left >= 0
}

// Append is View.Append. It drops the message too when it would cost
// more than Budget; Err then says so.
func (e *Evaluator) Append(dst, msg []byte) ([]byte, bool) {
	if e.v.aggregate || !e.Match(msg) {
		return dst, false
	}
	if e.v.star {
		return append(dst, msg...), true
	}
	start := len(dst)
	dst = wire.AppendMapHead(dst, len(e.v.items))
	for _, it := range e.v.items {
		before := len(dst)
		dst = wire.AppendString(dst, it.name)
		dst = e.appendExpr(dst, it.expr)
		if !e.spend(len(dst) - before) { // SELECT s AS a, s AS b, ...: its bytes
			return dst[:start], false
		}
	}
	return dst, true
}

// appendExpr appends the value of n; a field is copied as it is.
func (e *Evaluator) appendExpr(dst []byte, n *node) []byte {
	if n.op == opField {
		if s := e.slots[n.slot]; s.start >= 0 {
			return append(dst, e.msg[s.start:s.end]...)
		}
		return wire.AppendNil(dst)
	}
	return appendValue(dst, e.eval(n))
}

func (v *View) String() string { return fmt.Sprintf("view(%s)", v.statement) }
