package chaos

import (
	"fmt"
	"math"
	"time"
)

// walk follows one subscription's deliveries along the model's log.
type walk struct {
	m     *model
	c     *chanLog
	s     *Sub
	ps    []purgeBounds
	last  uint64          // the offset of the last message placed
	seen  map[string]bool // the values delivered
	gaps  map[string]*gap // the messages skipped, by kind of violation
	kinds []string        // the keys of gaps, in the order first seen
}

// gap is the messages a subscription skipped, of one kind: reported
// once, with the first.
type gap struct {
	known, first string
	n            int
}

// skip notes a message skipped.
func (w *walk) skip(kind, known, what string) {
	g := w.gaps[kind]
	if g == nil {
		g = &gap{known: known, first: what}
		w.gaps[kind] = g
		w.kinds = append(w.kinds, kind)
	}
	g.n++
}

// report reports the gaps, one violation a kind.
func (w *walk) report() {
	for _, k := range w.kinds {
		g := w.gaps[k]
		w.m.violate(k, g.known, "%s skips %d message(s), first %s", w.s.describe(), g.n, g.first)
	}
}

// checkDeliveries: from its start to where it ended, a subscription
// delivers every message of the log once, in order, and nothing else.
func (m *model) checkDeliveries(c *chanLog, ps []purgeBounds, s *Sub) {
	w := &walk{m: m, c: c, s: s, ps: ps, seen: map[string]bool{}, gaps: map[string]*gap{}}
	defer w.report()
	if s.Start > 0 {
		w.last = s.Start - 1
	}
	if s.Mode == Live {
		if first := w.liveStart(); first > 0 {
			w.last = max(w.last, first-1)
		}
	}
	end := s.Start
	for _, b := range s.Batches {
		for i, v := range b.Values {
			off := uint64(0)
			if i == len(b.Values)-1 && b.Off > 0 {
				off = b.Off - 1
			}
			w.deliver(v, off, b, i)
		}
		if b.Off <= w.last {
			m.violate("position", "", "%s: data position %d is not after its messages (%d)", s.describe(), b.Off, w.last)
		}
		end = max(end, b.Off)
	}
	switch s.End {
	case Unsubscribed:
		end = max(end, s.EndOff)
	case Open:
		// Still live: it owes every message acknowledged in the run.
		for _, e := range c.after(s.Start) {
			if e.msg != nil && e.msg.Outcome == Acked {
				end = max(end, e.off+1)
			}
		}
	}
	w.missing(end)
}

// deliver places value v (offset off, 0 unknown), the i-th of data b,
// after the last one.
func (w *walk) deliver(v string, off uint64, b Batch, i int) {
	s := w.s
	if v != "" {
		if w.seen[v] {
			w.m.violate("duplicate", "", "%s delivers %q twice", s.describe(), v)
			return
		}
		w.seen[v] = true
		msg := w.m.byID[v]
		if msg == nil || msg.Channel != s.Channel {
			return // reported by learn
		}
		if off == 0 {
			off = msg.Off
		}
		if off == 0 {
			return // a maybe message never placed: anywhere will do
		}
		if p := purgedBy(w.ps, off, s.Sent); p != nil {
			w.m.violate("purged-delivered", staleKnown(s.Edge, p.Edge), "%s delivers %s, purged before the subscribe (on e%d)", s.describe(), describeMsg(msg), p.Edge)
		}
	} else if off == 0 {
		off = w.nextNull(w.placedAfter(b, i))
		if off == 0 {
			return // an unplaced null (a delete whose outcome was unknown)
		}
	}
	if off <= w.last {
		w.m.violate("order", "", "%s delivers %s at offset %d after offset %d", s.describe(), describeValue(v), off, w.last)
		return
	}
	w.missing(off)
	w.last = off
}

// nextNull returns the offset of the log's next message after the last
// placed if it is a null before offset before, passing over messages a
// purge may have dropped; else 0. Past before, the offset of a message
// delivered after it, the null cannot be: placed there, it would put
// that message out of order.
func (w *walk) nextNull(before uint64) uint64 {
	for _, e := range w.c.after(w.last + 1) {
		switch {
		case e.off >= before:
			return 0
		case e.value() == "":
			return e.off
		case !mayPurge(w.ps, e.msg, e.off, time.Unix(1<<40, 0)):
			return 0
		}
	}
	return 0
}

// placedAfter returns the offset of the first message after the i-th
// of data b whose offset is known, or the largest offset if none is.
func (w *walk) placedAfter(b Batch, i int) uint64 {
	for j := i + 1; j < len(b.Values); j++ {
		if j == len(b.Values)-1 && b.Off > 0 {
			return b.Off - 1
		}
		if msg := w.m.byID[b.Values[j]]; b.Values[j] != "" && msg != nil && msg.Off != 0 {
			return msg.Off
		}
	}
	return math.MaxUint64
}

// missing reports the messages of the log between the last placed and
// off, which the subscription skipped.
func (w *walk) missing(off uint64) {
	for _, e := range w.c.after(w.last + 1) {
		if e.off >= off {
			return
		}
		kind, known := "missing", ""
		switch {
		case mayPurge(w.ps, e.msg, e.off, time.Unix(1<<40, 0)):
			// A purge may have dropped it before it was delivered: then
			// the subscription should have ended with out_of_sync.
			kind = "missing-purged"
		case (w.s.Mode == Count || w.s.Mode == Age) && storedBefore(e.msg, w.s.Sent):
			kind, known = "history-missing", knownHistory // in the history it announced
		}
		w.skip(kind, known, fmt.Sprintf("%s (delivered up to %d, then %d)", e.describe(), w.last, off))
		w.last = e.off
	}
}

func describeValue(v string) string {
	if v == "" {
		return "null"
	}
	return `"` + v + `"`
}
