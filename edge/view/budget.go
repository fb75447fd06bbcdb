package view

import "errors"

// Budget is how many work units an Evaluator may spend on one message
// (and an Aggregate on one Flush). A unit is about one byte compared or
// copied, or one node of the statement evaluated: a LIKE costs the bytes
// it reads of the string and of the pattern, LOWER, UPPER, LENGTH and
// SUBSTR the bytes of their string, a projection the bytes it appends,
// every other node one unit.
//
// A statement is at most a few KiB and a message at most 64 KiB, but a
// LIKE whose pattern comes from the message (s LIKE p) is no longer
// bounded by the statement: a segment of _ longer than the bit-parallel
// search holds is matched at each start, len(s) * len(p) steps, about a
// second for a 60 KB message, and a filter of 1,300 such terms took
// twenty minutes per message. The budget stops that at about 20 ms of
// one core.
//
// 1<<24 units are 256 passes over a 64 KiB string: every example of the
// protocol's documentation (two LIKE '%Japan%' over a 64 KiB title take
// 2 * 64 Ki units, a comparison a few units) stays under a thousandth of
// it, and so does a filter that reads each field of a message a few
// times.
const Budget = 1 << 24

// maxScratch is the most scratch memory (strings made by LOWER and
// UPPER) an Evaluator keeps from one message for the next: a message can
// make up to about Budget bytes of them, and an edge holds an Evaluator
// per subscription.
const maxScratch = 256 << 10

// ErrBudget is the error of a message on which a view gave up because
// evaluating it would cost more than Budget: the edge ends the
// subscription with it, since the next message may cost the same.
var ErrBudget = errors.New("view: the filter exceeded its per-message evaluation budget")

// spend takes n units from the message's budget and reports whether
// some are left.
func (e *Evaluator) spend(n int) bool {
	e.left -= n
	return e.left >= 0
}

// Err returns ErrBudget when the last Match or Append gave up on its
// message because it would cost more than Budget (and so returned
// false), else nil.
func (e *Evaluator) Err() error {
	if e.left < 0 {
		return ErrBudget
	}
	return nil
}
