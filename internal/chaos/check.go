package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// Known bugs the checker reports, named by their section of issue 29.
const (
	knownHistory = "issue 29 §1: history right after a publish on a cluster"
	knownReorder = "issue 29 §3: a publish answered unavailable stored after later ones"
	knownStale   = "issue 29 §4: a read or history start on another edge misses what the log acknowledged"
)

// Check replays h against the model and returns every violation found.
// h must no longer change.
func Check(h *History) []Violation {
	m := newModel(h)
	m.learnAll()
	m.checkEpochs()
	for _, f := range h.Failures {
		m.violate("edge", "", "%s", f)
	}
	for name, c := range m.chans {
		m.checkRealTime(name, c)
		m.checkConnOrder(c)
		ps := c.bounds()
		for _, s := range h.Subs {
			if s.Channel == name {
				m.checkSub(c, ps, s)
			}
		}
		for _, r := range h.Reads {
			if r.Channel == name {
				m.checkRead(c, ps, r)
			}
		}
		for _, w := range c.msgs {
			if w.Kind == CAS {
				m.checkCAS(c, ps, w)
			}
		}
	}
	sort.SliceStable(m.out, func(i, j int) bool { return m.out[i].Kind < m.out[j].Kind })
	return m.out
}

// checkEpochs: one log, one epoch per channel, whatever the faults. (A
// log in partitions has one epoch per partition: channels may differ.)
func (m *model) checkEpochs() {
	for ch, seen := range m.h.epochs {
		for e, where := range seen {
			if e != m.h.first[ch] {
				m.violate("epoch", "", "on %s, epoch %d (first seen in %s), the channel began in epoch %d", ch, e, where, m.h.first[ch])
			}
		}
	}
}

// checkRealTime: a message acknowledged before another was sent has a
// smaller offset (positions strictly increase).
func (m *model) checkRealTime(name string, c *chanLog) {
	var acked []*Msg
	for _, w := range c.msgs {
		if w.Outcome == Acked {
			acked = append(acked, w)
		}
	}
	slices.SortFunc(acked, func(a, b *Msg) int { return cmp.Compare(a.Off, b.Off) })
	// Scanning from the highest offset down, the earliest reply among
	// the messages above: it must come after each message's send.
	var first *Msg
	for i := len(acked) - 1; i >= 0; i-- {
		w := acked[i]
		if first != nil && first.Replied.Before(w.Sent) {
			m.violate("order", "", "on %s, %s was acknowledged before %s was sent, at a higher offset", name, describeMsg(first), describeMsg(w))
		}
		if first == nil || w.Replied.Before(first.Replied) {
			first = w
		}
	}
}

// checkConnOrder: a connection's message whose outcome was unknown must
// not land after a later acknowledged message of the same connection.
func (m *model) checkConnOrder(c *chanLog) {
	later := map[int]*Msg{} // per connection, the lowest acked offset after the current write
	for i := len(c.msgs) - 1; i >= 0; i-- {
		w := c.msgs[i]
		if a := later[w.Conn]; a != nil && w.Outcome == Maybe && w.Off > a.Off {
			m.violate("reorder-after-unavailable", knownReorder,
				"%s (answered %s) stored at offset %d, after %s, sent later by the same connection", describeMsg(w), w.Err, w.Off, describeMsg(a))
		}
		if w.Outcome == Acked && (later[w.Conn] == nil || w.Off < later[w.Conn].Off) {
			later[w.Conn] = w
		}
	}
}

// describe functions name a record in a violation, with its interval
// in seconds since the run began.

func describeMsg(w *Msg) string {
	if w == nil {
		return "a null (unexplained delete)"
	}
	v := fmt.Sprintf("%q", w.ID)
	if w.ID == "" {
		v = "null"
	}
	s := fmt.Sprintf("%s %s to %s by c%d on e%d [%s] -> %s", w.Kind, v, w.Channel, w.Conn, w.Edge, w.Span.times(), w.Outcome)
	if w.Off != 0 {
		s += fmt.Sprintf(" @%d", w.Off)
	}
	if w.Err != "" {
		s += " (" + w.Err + ": " + w.Reason + ")"
	}
	return s
}

func (e *entry) describe() string {
	if e.msg == nil {
		return fmt.Sprintf("a null at %d", e.off)
	}
	return describeMsg(e.msg)
}

func (s *Sub) describe() string {
	arg := ""
	switch s.Mode {
	case AtPos, ReadAll:
		arg = fmt.Sprintf(" at %d", s.At)
	case Count, Age:
		arg = fmt.Sprintf(" %d", s.N)
	}
	return fmt.Sprintf("subscription %s of c%d on e%d to %s (%s%s) [%s] start %d", s.Name, s.Conn, s.Edge, s.Channel, s.Mode, arg, s.Span.times(), s.Start)
}

func (r *Read) describe() string {
	return fmt.Sprintf("read of c%d on e%d of %s at %d [%s]", r.Conn, r.Edge, r.Channel, r.At, r.Span.times())
}

// times formats the span as seconds since the Unix epoch's second, short
// and comparable between records of one run.
func (s Span) times() string {
	f := func(t int64) string { return fmt.Sprintf("%d.%03d", t/1e9%1000, t/1e6%1000) }
	if s.Replied.IsZero() {
		return f(s.Sent.UnixNano()) + ", -"
	}
	return f(s.Sent.UnixNano()) + ", " + f(s.Replied.UnixNano())
}
