package chaos

import (
	"math"
	"time"
)

// What the log may hold at an instant of a request's interval
// [sent, replied]: the predicates the checks share.

// purgeBounds is what the model knows of where a purge cut its channel:
// every message at or below lo is dropped by it (they were acknowledged
// before it was sent); none at or above hi is (sent after it was
// acknowledged). Between the two, either.
type purgeBounds struct {
	*Purge
	lo, hi uint64
}

// bounds computes the purge bounds of c's purges, once offsets are
// learned.
func (c *chanLog) bounds() []purgeBounds {
	var out []purgeBounds
	for _, p := range c.purges {
		b := purgeBounds{Purge: p, hi: math.MaxUint64}
		for _, e := range c.sorted {
			w := e.msg
			if w == nil {
				continue
			}
			if storedBefore(w, p.Sent) {
				b.lo = max(b.lo, e.off)
			}
			if p.Outcome == Acked && w.Sent.After(p.Replied) {
				b.hi = min(b.hi, e.off)
			}
		}
		out = append(out, b)
	}
	return out
}

// mayPurge reports whether a purge sent before t may have dropped the
// message w (offset off, 0 unknown).
func mayPurge(ps []purgeBounds, w *Msg, off uint64, t time.Time) bool {
	for _, p := range ps {
		if !p.Sent.Before(t) {
			continue
		}
		if off != 0 && off < p.hi {
			return true
		}
		if off == 0 && (w == nil || w.Sent.Before(p.replied())) {
			return true
		}
	}
	return false
}

// purged reports whether a purge acknowledged before t dropped the
// position off for sure.
func purged(ps []purgeBounds, off uint64, t time.Time) bool { return purgedBy(ps, off, t) != nil }

// purgedBy returns a purge acknowledged before t that dropped the
// position off for sure, or nil.
func purgedBy(ps []purgeBounds, off uint64, t time.Time) *purgeBounds {
	for i, p := range ps {
		if p.Outcome == Acked && p.Replied.Before(t) && off <= p.lo {
			return &ps[i]
		}
	}
	return nil
}

// mayExpire reports whether a position off may be expired for a request
// replied at t: a purge sent before t may have cut the log above it.
func mayExpire(ps []purgeBounds, off uint64, t time.Time) bool {
	for _, p := range ps {
		if p.Sent.Before(t) && off < p.hi {
			return true
		}
	}
	return false
}

// surely reports whether the entry e is in the log throughout [s.Sent,
// s.Replied]: known stored before the request was sent, and no purge
// may have dropped it by the reply.
func surely(ps []purgeBounds, e *entry, s Span) bool {
	w := e.msg
	return storedBefore(w, s.Sent) && !mayPurge(ps, w, e.off, s.replied())
}

// storedBefore reports whether the test knew, before t, that w was in
// the log: acknowledged, or seen in a data PDU or a read.
func storedBefore(w *Msg, t time.Time) bool {
	return w != nil && (w.Outcome == Acked && w.Replied.Before(t) || !w.seen.IsZero() && w.seen.Before(t))
}

// maybe reports whether the message w (at off, 0 unknown) may be in the
// log at some instant of s: sent before the reply, not refused, not
// purged for sure before the request was sent.
func maybe(ps []purgeBounds, w *Msg, off uint64, s Span) bool {
	if w != nil && (w.Outcome == Refused || !w.Sent.Before(s.replied())) {
		return false
	}
	return off == 0 || !purged(ps, off, s.Sent)
}
