package chaos

import (
	"slices"
	"time"
)

// checkSub checks a subscription: its answer against the log, then what
// it delivered.
func (m *model) checkSub(c *chanLog, ps []purgeBounds, s *Sub) {
	switch {
	case s.Err == "expired_position" && s.Mode == AtPos:
		if !mayExpire(ps, s.At, s.replied()) {
			m.violate("expired", "", "%s: expired_position, but no purge covers %d", s.describe(), s.At)
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
	if purged(ps, s.At, s.Sent) {
		m.violate("purged-readable", "", "%s: position %d was purged before the subscribe, yet it was accepted", s.describe(), s.At)
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
	var left *entry // the newest message surely there before the start
	for _, e := range c.sorted {
		if e.off >= s.Start {
			if surely(ps, e, s.Span) {
				sure++
			}
			if maybe(ps, e.msg, e.off, s.Span) {
				may++
			}
		} else if surely(ps, e, s.Span) {
			left = e
		}
	}
	may += m.unplaced(c, ps, s.Span)
	if sure > int(s.N) {
		m.violate("history-extra", m.otherEdge(c, ps, s), "%s: %d messages surely in the log are at or after its start", s.describe(), sure)
	}
	if left != nil && may < int(s.N) {
		m.violate("history-missing", knownHistory, "%s leaves out %s (at most %d messages may be at or after the start)", s.describe(), left.describe(), may)
	}
}

// otherEdge marks a history that starts too early as the known issue 29
// §4 when a message surely in the log at its start was written on
// another edge (the replica had not applied it).
func (m *model) otherEdge(c *chanLog, ps []purgeBounds, s *Sub) string {
	for _, e := range c.after(s.Start) {
		if surely(ps, e, s.Span) && e.msg.Edge != s.Edge {
			return knownStale
		}
	}
	return ""
}

// unplaced counts the messages of c with no known offset that may be in
// the log during s: they may be anywhere.
func (m *model) unplaced(c *chanLog, ps []purgeBounds, s Span) int {
	n := 0
	for _, w := range c.msgs {
		if w.Off == 0 && maybe(ps, w, 0, s) {
			n++
		}
	}
	return n
}

// ageMargin absorbs the edge's coarse clock and the rounding of times.
const ageMargin = 100 * time.Millisecond

// checkAgeStart: a history of A seconds starts at the oldest message
// younger than A: none surely young is left out, none surely old is in.
func (m *model) checkAgeStart(c *chanLog, ps []purgeBounds, s *Sub) {
	age := time.Duration(s.N) * time.Second
	for _, e := range c.sorted {
		if !surely(ps, e, s.Span) {
			continue
		}
		young := s.Replied.Sub(e.msg.Sent) < age-ageMargin
		old := s.Sent.Sub(e.msg.Replied) > age+ageMargin
		switch {
		case young && e.off < s.Start:
			m.violate("history-missing", knownHistory, "%s leaves out %s, younger than %ds", s.describe(), e.describe(), s.N)
		case old && e.off >= s.Start:
			m.violate("history-extra", m.otherEdge(c, ps, s), "%s includes %s, older than %ds", s.describe(), e.describe(), s.N)
		}
	}
}

// checkLiveStart: a live subscription delivers nothing acknowledged
// before it was sent, and starts before every message sent after its
// reply.
func (m *model) checkLiveStart(c *chanLog, s *Sub) {
	delivered := map[string]bool{}
	for _, b := range s.Batches {
		for _, v := range b.Values {
			delivered[v] = true
		}
	}
	for _, e := range c.sorted {
		if w := e.msg; w != nil && w.ID != "" && w.Outcome == Acked && w.Replied.Before(s.Sent) && delivered[w.ID] {
			m.violate("live-old", staleKnown(s.Edge, w.Edge), "%s delivers %s, acknowledged before the subscribe", s.describe(), e.describe())
		}
		if w := e.msg; w != nil && w.Sent.After(s.Replied) && e.off < s.Start {
			m.violate("live-start", "", "%s starts after %s, sent after the subscribe's reply", s.describe(), e.describe())
		}
	}
}

// liveStart returns where a live subscription's deliveries must begin:
// its first message placed, but no later than the first message sent
// after its reply. Messages between its ok.position and there are
// reported once: resuming from that position would deliver them.
func (w *walk) liveStart() uint64 {
	s, first := w.s, w.firstPlaced()
	var skipped []string
	for _, e := range w.c.after(s.Start) {
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
// with a known offset, stepped back over the messages before it there.
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
			at, _ := slices.BinarySearchFunc(log, off, func(e *entry, o uint64) int { return compareU64(e.off, o) })
			if at >= i {
				return log[at-i].off
			}
			return 0
		}
		if len(b.Values) > 0 {
			return 0
		}
	}
	return 0
}
