package chaos

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// checkSub checks a subscription: its answer against the log, then what
// it delivered.
func (m *model) checkSub(c *chanLog, ps []purgeBounds, s *Sub) {
	switch {
	case s.Err == "expired_position" && s.Mode == AtPos:
		if !mayExpire(ps, s.At, s.replied()) {
			m.violate("expired", "", "%s: expired_position (%q), but no purge covers %d", s.describe(), s.Reason, s.At)
		}
		return
	case s.Err != "":
		return // the request failed: nothing to check (the test counts errors)
	case s.Replied.IsZero():
		return
	}
	switch s.Mode {
	case AtPos:
		m.checkAtStart(c, ps, s)
	case Count:
		m.checkCountStart(c, ps, s)
	case Age:
		m.checkAgeStart(c, ps, s)
	case Live:
		m.checkLiveStart(c, s)
	}
	m.checkDeliveries(c, ps, s)
}

// checkAtStart: a subscription at P starts at P, or after it only past
// offsets with no message; and P was not purged for sure.
func (m *model) checkAtStart(c *chanLog, ps []purgeBounds, s *Sub) {
	if p := purgedBy(ps, s.At, s.Sent); p != nil {
		m.violate("purged-readable", staleKnown(s.Edge, p.Edge), "%s: position %d was purged before the subscribe (on e%d), yet it was accepted", s.describe(), s.At, p.Edge)
	}
	for _, e := range c.after(s.At) {
		if e.off >= s.Start {
			break
		}
		if !mayPurge(ps, e.msg, e.off, s.replied()) {
			m.violate("skipped", "", "%s skips %s", s.describe(), e.describe())
		}
	}
}

// checkCountStart: a history of N starts at the oldest of the log's last
// N messages at an instant of the request: no more than N messages
// surely there are at or after the start, and none surely there is left
// out unless N others may have been.
func (m *model) checkCountStart(c *chanLog, ps []purgeBounds, s *Sub) {
	var sure, may int
	for _, e := range c.after(s.Start) {
		if e.msg != nil && e.msg.Sent.After(s.Replied.Add(lateMargin)) {
			break // the rest came later still
		}
		if surely(ps, e, s.Span) {
			sure++
		}
		if maybe(ps, e.msg, e.off, s.Span) {
			may++
		}
	}
	may += m.unplaced(c, ps, s.Span)
	if sure > int(s.N) {
		m.violate("history-extra", m.otherEdge(c, ps, s), "%s: %d messages surely in the log are at or after its start", s.describe(), sure)
	}
	if left := newestSurely(c, ps, s); left != nil && may < int(s.N) {
		m.violate("history-missing", knownHistory, "%s leaves out %s (at most %d messages may be at or after the start)", s.describe(), left.describe(), may)
	}
}

// lateMargin bounds how long after a request's reply a message sent
// before it may still be stored with a higher offset than one sent after
// (past the edge's request deadlines): scans of the log stop there.
const lateMargin = time.Minute

// newestSurely returns the newest message before s's start that was
// surely in the log during s, or nil.
func newestSurely(c *chanLog, ps []purgeBounds, s *Sub) *entry {
	before := c.before(s.Start)
	for i := len(before) - 1; i >= 0; i-- {
		e := before[i]
		if surely(ps, e, s.Span) {
			return e
		}
		if purged(ps, e.off, s.Sent) {
			return nil // and so is everything before it
		}
	}
	return nil
}

// otherEdge marks a history that starts too early as the known issue 29
// §4 when a message surely in the log at its start was not acknowledged
// by the subscription's edge before it (see staleMsg).
func (m *model) otherEdge(c *chanLog, ps []purgeBounds, s *Sub) string {
	for _, e := range c.after(s.Start) {
		if surely(ps, e, s.Span) && staleMsg(s.Span, e.msg) != "" {
			return knownStale
		}
	}
	return ""
}

// unplaced counts the messages of c with no known offset that may be in
// the log during s: they may be anywhere.
func (m *model) unplaced(c *chanLog, ps []purgeBounds, s Span) int {
	n := 0
	for _, w := range c.floats {
		if maybe(ps, w, 0, s) {
			n++
		}
	}
	return n
}

// ageMargin absorbs the edge's coarse clock and the rounding of times.
const ageMargin = 100 * time.Millisecond

// checkAgeStart: a history of A seconds starts at the oldest message
// younger than A: none surely young is left out, none surely old is in.
// Offsets follow real time (a message acknowledged before another was
// sent is before it), so each scan stops at the first message past which
// none can qualify.
func (m *model) checkAgeStart(c *chanLog, ps []purgeBounds, s *Sub) {
	age := time.Duration(s.N) * time.Second
	young := func(e *entry) bool { return e.msg != nil && s.Replied.Sub(e.msg.Sent) < age-ageMargin }
	old := func(e *entry) bool {
		return storedBefore(e.msg, s.Sent.Add(-age-ageMargin))
	}
	var left, in []*entry
	before := c.before(s.Start)
	for i := len(before) - 1; i >= 0 && !old(before[i]); i-- {
		if e := before[i]; young(e) && surely(ps, e, s.Span) {
			left = append(left, e)
		}
	}
	for _, e := range c.after(s.Start) {
		if young(e) {
			break
		}
		if old(e) && surely(ps, e, s.Span) {
			in = append(in, e)
		}
	}
	if len(left) > 0 {
		m.violate("history-missing", knownHistory, "%s leaves out %d message(s) younger than %ds, the newest %s", s.describe(), len(left), s.N, left[0].describe())
	}
	if len(in) > 0 {
		m.violate("history-extra", m.otherEdge(c, ps, s), "%s includes %d message(s) older than %ds, the first %s", s.describe(), len(in), s.N, in[0].describe())
	}
}

// checkLiveStart: a live subscription delivers nothing acknowledged
// before it was sent (nor shown by its edge: knownBefore), and starts
// before every message sent after its reply.
func (m *model) checkLiveStart(c *chanLog, s *Sub) {
	var old []*Msg
	for _, b := range s.Batches {
		for _, v := range b.Values {
			if w := m.byID[v]; knownBefore(w, s.Sent, s.Edge) {
				old = append(old, w)
			}
		}
	}
	if len(old) > 0 {
		m.violate("live-old", staleMsg(s.Span, old[0]), "%s delivers %d message(s) acknowledged before the subscribe, first %s", s.describe(), len(old), describeMsg(old[0]))
	}
	before := c.before(s.Start)
	for i := len(before) - 1; i >= 0; i-- {
		w := before[i].msg
		if storedBefore(w, s.Sent) {
			break // everything before it was sent before it was acknowledged
		}
		if w != nil && w.Sent.After(s.Replied) {
			m.violate("live-start", "", "%s starts after %s, sent after the subscribe's reply", s.describe(), before[i].describe())
		}
	}
}

// liveStart returns where a live subscription's deliveries must begin:
// its first message placed, but no later than the first message sent
// after its reply. Messages between its ok.position and there are
// reported once: resuming from that position would deliver them.
func (w *walk) liveStart() uint64 {
	s, first := w.s, w.firstPlaced()
	owed := s.owedEnd()
	var skipped []string
	for _, e := range w.c.after(s.Start) {
		if e.off >= owed {
			break // it ended before delivering more: nothing was left out
		}
		if (first != 0 && e.off >= first) || (e.msg != nil && e.msg.Sent.After(s.Replied)) {
			first = e.off
			break
		}
		skipped = append(skipped, e.describe())
	}
	if len(skipped) > 0 {
		w.m.violate("live-start-gap", "", "%s never delivers %d message(s) at or after its ok.position, first %s", s.describe(), len(skipped), skipped[0])
	}
	return first
}

// firstPlaced returns the offset of the first message a subscription
// delivered, 0 for none or unknown: the first of its first data PDU
// with a known offset, stepped back over the nulls before it there. (A
// message before it has no known offset, so no entry of the log to
// step over: stepping over it put the start before the log's first
// entry, or, unknown, let a maybe message first in a data PDU make
// everything delivered after it look out of order.)
func (w *walk) firstPlaced() uint64 {
	for _, b := range w.s.Batches {
		for i, v := range b.Values {
			off := uint64(0)
			if msg := w.m.byID[v]; msg != nil {
				off = msg.Off
			}
			if i == len(b.Values)-1 && b.Off > 0 {
				off = b.Off - 1
			}
			if off == 0 {
				continue
			}
			log := w.c.after(w.s.Start)
			at, _ := slices.BinarySearchFunc(log, off, func(e *entry, o uint64) int { return cmp.Compare(e.off, o) })
			nulls := 0
			for _, u := range b.Values[:i] {
				if u == "" {
					nulls++
				}
			}
			if at >= nulls {
				return log[at-nulls].off
			}
			return 0
		}
		if len(b.Values) > 0 {
			return 0
		}
	}
	return 0
}

// owedEnd is the offset from which a subscription that ended owes
// nothing: past its last data, or its unsubscribe's position (the one it
// would have read next). A subscription still open owes everything.
func (s *Sub) owedEnd() uint64 {
	if s.End == Open {
		return math.MaxUint64
	}
	end := s.Start
	for _, b := range s.Batches {
		end = max(end, b.Off)
	}
	if s.End == Unsubscribed {
		end = max(end, s.EndOff)
	}
	return end
}
