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
// s.Replied] as the request's edge must show it: known there before the
// request was sent (knownBefore), and no purge may have dropped it by
// the reply.
func surely(ps []purgeBounds, e *entry, s Span) bool {
	w := e.msg
	return knownBefore(w, s.Sent, s.Edge) && !mayPurge(ps, w, e.off, s.replied())
}

// storedBefore reports whether the test knew, before t, that w was in
// the log: acknowledged, or seen in a data PDU or a read, on any edge.
func storedBefore(w *Msg, t time.Time) bool {
	return w != nil && (w.Outcome == Acked && w.Replied.Before(t) || !w.seen.IsZero() && w.seen.Before(t))
}

// knownBefore reports whether a request sent at t on edge must find w in
// the log: acknowledged before t (by any edge), or shown before t by
// that edge itself (delivered or read there). What the product promises
// a read or a subscribe is what was acknowledged before it
// (docs/cluster.md), and an edge does not go back on what it showed.
// A message another edge delivered, not yet acknowledged, is not owed: a
// follower's feed can deliver a committed message a few milliseconds
// before the stream's leader applies it, which is what a request asks.
func knownBefore(w *Msg, t time.Time, edge int) bool {
	if w == nil {
		return false
	}
	if w.Outcome == Acked && w.Replied.Before(t) {
		return true
	}
	at, ok := w.seenOn[edge]
	return ok && at.Before(t)
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
