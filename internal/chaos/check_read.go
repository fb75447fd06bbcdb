package chaos

// checkRead: a read answers the newest message (or, at a position, the
// first at or after it) of the log at an instant of its interval.
func (m *model) checkRead(c *chanLog, ps []purgeBounds, r *Read) {
	switch {
	case r.Err == "expired_position":
		if r.At == 0 || !mayExpire(ps, r.At, r.replied()) {
			m.violate("expired", "", "%s: expired_position, but no purge covers %d", r.describe(), r.At)
		}
		return
	case r.Err != "" || r.Replied.IsZero():
		return
	}
	if r.At != 0 && purged(ps, r.At, r.Sent) {
		m.violate("purged-readable", "", "%s: position %d was purged before the read, yet it answered", r.describe(), r.At)
		return
	}
	if r.Off != 0 {
		if !m.readable(c, ps, r) {
			return
		}
	}
	from := r.At
	if r.At == 0 && r.Off != 0 {
		from = r.Off + 1
	}
	for _, e := range c.after(from) {
		if r.At != 0 && r.Off != 0 && e.off >= r.Off {
			break
		}
		if surely(ps, e, r.Span) {
			kind, known := "stale-read", ""
			if e.msg.Edge != r.Edge {
				known = knownStale
			}
			m.violate(kind, known, "%s answered %d, but %s was surely there", r.describe(), r.Off, e.describe())
			return
		}
	}
}

// readable checks that the message r answered may have been in the log
// during r.
func (m *model) readable(c *chanLog, ps []purgeBounds, r *Read) bool {
	e := c.at[r.Off]
	if r.Off < r.At {
		m.violate("read-position", "", "%s answered position %d, before the one asked", r.describe(), r.Off)
		return false
	}
	if e == nil || !maybe(ps, e.msg, e.off, r.Span) {
		what := "nothing known"
		if e != nil {
			what = e.describe()
		}
		m.violate("read-impossible", "", "%s answered %d (%s), which cannot be in the log then", r.describe(), r.Off, what)
		return false
	}
	return true
}

// checkCAS: a compare-and-set write is stored only if its position was
// the channel's newest message (nothing lies between the two), and
// refused only if a newer message may have been there.
func (m *model) checkCAS(c *chanLog, ps []purgeBounds, w *Msg) {
	switch {
	case w.Outcome == Acked:
		if purged(ps, w.Expect, w.Sent) {
			m.violate("cas", "", "%s stored, but position %d was purged before", describeMsg(w), w.Expect)
		}
		for _, e := range c.after(w.Expect + 1) {
			if e.off >= w.Off {
				break
			}
			m.violate("cas", "", "%s stored after %d, but %s lies between", describeMsg(w), w.Expect, e.describe())
			return
		}
	case w.Err == "position_mismatch":
		if m.unplaced(c, ps, w.Span) > 0 {
			return
		}
		if e := c.at[w.Expect]; e != nil && mayPurge(ps, e.msg, e.off, w.replied()) {
			return
		}
		for _, e := range c.after(w.Expect + 1) {
			if e.msg != w && maybe(ps, e.msg, e.off, w.Span) {
				return
			}
		}
		m.violate("cas-refused", "", "%s refused, but position %d was the newest throughout", describeMsg(w), w.Expect)
	}
}
