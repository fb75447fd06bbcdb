package chaos

// checkRead: a read answers the newest message (or, at a position, the
// first at or after it) of the log at an instant of its interval.
func (m *model) checkRead(c *chanLog, ps []purgeBounds, r *Read) {
	switch {
	case r.Err == "expired_position":
		if r.At == 0 || !mayExpire(ps, r.At, r.replied()) {
			m.violate("expired", "", "%s: expired_position (%q), but no purge covers %d", r.describe(), r.Reason, r.At)
		}
		return
	case r.Err != "" || r.Replied.IsZero():
		return
	}
	if p := purgedBy(ps, r.At, r.Sent); r.At != 0 && p != nil {
		m.violate("purged-readable", staleKnown(r.Edge, p.Edge), "%s: position %d was purged before the read (on e%d), yet it answered", r.describe(), r.At, p.Edge)
		return
	}
	off := r.Off
	if e := c.at[off]; r.Value == "" && (e == nil || e.value() != "") {
		off = 0 // a null that is no delete: nothing there
	}
	if off != 0 && !m.readable(c, ps, r, off) {
		return
	}
	from := r.At
	if r.At == 0 && off != 0 {
		from = off + 1
	}
	for _, e := range c.after(from) {
		if r.At != 0 && off != 0 && e.off >= off || e.msg != nil && e.msg.Sent.After(r.Replied) {
			break // none after it can have been acknowledged before the read
		}
		if surely(ps, e, r.Span) {
			m.violate("stale-read", staleMsg(r.Span, e.msg), "%s answered %d, but %s was surely there", r.describe(), r.Off, e.describe())
			return
		}
	}
}

// staleKnown marks a stale answer as the known issue 29 §4 when the
// write it missed was made on another edge than the request.
func staleKnown(edge, writer int) string {
	if edge != writer {
		return knownStale
	}
	return ""
}

// staleMsg marks an answer that missed w as the known issue 29 §4
// unless the request's own edge had acknowledged w before the request
// was sent (the read-your-writes the protocol promises): w written on
// another edge, or known stored only from what another edge delivered.
func staleMsg(s Span, w *Msg) string {
	if w.Edge == s.Edge && w.Outcome == Acked && w.Replied.Before(s.Sent) {
		return ""
	}
	return knownStale
}

// readable checks that the message r answered, at off, may have been in
// the log during r.
func (m *model) readable(c *chanLog, ps []purgeBounds, r *Read, off uint64) bool {
	e := c.at[off]
	switch {
	case off < r.At:
		m.violate("read-position", "", "%s answered position %d, before the one asked", r.describe(), off)
	case e == nil:
		m.violate("read-impossible", "", "%s answered %d, where no message is known", r.describe(), off)
	case purgedBy(ps, off, r.Sent) != nil:
		p := purgedBy(ps, off, r.Sent)
		m.violate("stale-read", staleKnown(r.Edge, p.Edge), "%s answered %s, purged before the read (on e%d)", r.describe(), e.describe(), p.Edge)
	case !maybe(ps, e.msg, e.off, r.Span):
		m.violate("read-impossible", "", "%s answered %s, which cannot be in the log then", r.describe(), e.describe())
	default:
		return true
	}
	return false
}

// checkCAS: a compare-and-set write is stored only if its position was
// the channel's newest message (nothing lies between the two), and
// refused only if a newer message may have been there.
func (m *model) checkCAS(c *chanLog, ps []purgeBounds, w *Msg) {
	switch {
	case w.Outcome == Acked:
		// A purged channel holds nothing: there, any position after its
		// last message matches, as a read of nothing answers.
		for _, e := range c.after(w.Expect + 1) {
			if e.off >= w.Off {
				break
			}
			if !mayPurge(ps, e.msg, e.off, w.replied()) {
				m.violate("cas", "", "%s stored after %d, but %s lies between", describeMsg(w), w.Expect, e.describe())
				return
			}
		}
	case w.Err == "position_mismatch":
		if m.unplaced(c, ps, w.Span) > 0 {
			return
		}
		if e := c.at[w.Expect]; e == nil || !storedBefore(e.msg, w.Sent) || mayPurge(ps, e.msg, e.off, w.replied()) {
			return // its position may not have been the newest yet, or any more
		}
		for _, e := range c.after(w.Expect + 1) {
			if e.msg != w && maybe(ps, e.msg, e.off, w.Span) {
				return
			}
		}
		m.violate("cas-refused", "", "%s refused, but position %d was the newest throughout", describeMsg(w), w.Expect)
	}
}
