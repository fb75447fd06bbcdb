package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// model is a History indexed for Check: per channel, the messages by
// offset and the purges.
type model struct {
	h     *History
	byID  map[string]*Msg
	chans map[string]*chanLog
	out   []Violation
}

// chanLog is what the model knows of one channel's log.
type chanLog struct {
	msgs   []*Msg            // every write request, in the order sent
	purges []*Purge          // every purge request that was not refused
	at     map[uint64]*entry // the messages known stored, by offset
	sorted []*entry          // the same, by offset (built after learning)
	floats []*Msg            // the messages not refused with no known offset (likewise)
}

// entry is a message known to be stored at an offset: a Msg, or a null
// seen there that no acknowledged delete explains (msg nil).
type entry struct {
	off uint64
	msg *Msg
}

func (e *entry) value() string {
	if e.msg == nil {
		return ""
	}
	return e.msg.ID
}

func newModel(h *History) *model {
	m := &model{h: h, byID: map[string]*Msg{}, chans: map[string]*chanLog{}}
	for _, w := range h.Msgs {
		if w.Outcome == Pending {
			w.Outcome = Maybe
		}
		if w.ID != "" {
			m.byID[w.ID] = w
		}
		c := m.chanOf(w.Channel)
		c.msgs = append(c.msgs, w)
		if w.Outcome == Acked {
			m.store(c, w.Off, w, "acknowledged")
		}
	}
	for _, p := range h.Purges {
		if p.Outcome == Pending {
			p.Outcome = Maybe
		}
		if p.Outcome != Refused {
			m.chanOf(p.Channel).purges = append(m.chanOf(p.Channel).purges, p)
		}
	}
	return m
}

func (m *model) chanOf(name string) *chanLog {
	c := m.chans[name]
	if c == nil {
		c = &chanLog{at: map[uint64]*entry{}}
		m.chans[name] = c
	}
	return c
}

// store notes that w (nil: an unexplained null) is stored at off, as
// how says; two messages at one offset are a violation.
func (m *model) store(c *chanLog, off uint64, w *Msg, how string) {
	if off == 0 {
		return
	}
	if e, ok := c.at[off]; ok {
		switch {
		case e.msg == w:
		case e.msg == nil && (w == nil || w.ID == ""):
			e.msg = w // a null seen first, now explained
		case w == nil && e.msg.ID == "":
		default:
			m.violate("position", "", "offset %d holds %s and %s (%s)", off, e.describe(), describeMsg(w), how)
		}
		return
	}
	if w != nil && w.Off != 0 && w.Off != off {
		m.violate("position", "", "%s at offset %d, %s at %d", describeMsg(w), w.Off, how, off)
		return
	}
	if w != nil {
		w.Off = off
	}
	c.at[off] = &entry{off: off, msg: w}
}

// learn records an observation of value v at offset off on channel ch.
func (m *model) learn(ch, v string, off uint64, how string) {
	c := m.chanOf(ch)
	if v == "" {
		m.store(c, off, nil, how)
		return
	}
	w := m.byID[v]
	if w == nil || w.Channel != ch {
		m.violate("unknown", "", "%s: value %q at offset %d was never published on %s", how, v, off, ch)
		return
	}
	if w.Outcome == Refused {
		m.violate("refused-stored", "", "%s: %s was refused (%s) but is at offset %d", how, describeMsg(w), w.Err, off)
	}
	m.store(c, off, w, how)
}

// seenAt notes that the message of value v was seen stored at t, on
// edge.
func (m *model) seenAt(v string, t time.Time, edge int) {
	w := m.byID[v]
	if w == nil || t.IsZero() {
		return
	}
	if w.seen.IsZero() || t.Before(w.seen) {
		w.seen = t
	}
	if at, ok := w.seenOn[edge]; !ok || t.Before(at) {
		if w.seenOn == nil {
			w.seenOn = map[int]time.Time{}
		}
		w.seenOn[edge] = t
	}
}

// learnAll learns every offset the history shows, then sorts each log.
func (m *model) learnAll() {
	for _, s := range m.h.Subs {
		for _, b := range s.Batches {
			for _, v := range b.Values {
				m.seenAt(v, b.At, s.Edge)
			}
			if len(b.Values) > 0 && b.Off > 0 {
				m.learn(s.Channel, b.Values[len(b.Values)-1], b.Off-1, "data of "+s.describe())
			}
		}
	}
	for _, r := range m.h.Reads {
		// A null read may say "nothing there" as well as name a delete.
		if r.Err == "" && r.Off != 0 && r.Value != "" {
			m.seenAt(r.Value, r.Replied, r.Edge)
			m.learn(r.Channel, r.Value, r.Off, r.describe())
		}
	}
	for _, c := range m.chans {
		for _, e := range c.at {
			c.sorted = append(c.sorted, e)
		}
		slices.SortFunc(c.sorted, func(a, b *entry) int { return cmp.Compare(a.off, b.off) })
		for _, w := range c.msgs {
			if w.Off == 0 && w.Outcome != Refused {
				c.floats = append(c.floats, w)
			}
		}
	}
}

// before returns the channel's known entries at offsets < off.
func (c *chanLog) before(off uint64) []*entry {
	i, _ := slices.BinarySearchFunc(c.sorted, off, func(e *entry, o uint64) int { return cmp.Compare(e.off, o) })
	return c.sorted[:i]
}

// after returns the channel's known entries at offsets >= off.
func (c *chanLog) after(off uint64) []*entry {
	i, _ := slices.BinarySearchFunc(c.sorted, off, func(e *entry, o uint64) int { return cmp.Compare(e.off, o) })
	return c.sorted[i:]
}

// replied returns the reply's time, or the far future for none.
func (s Span) replied() time.Time {
	if s.Replied.IsZero() {
		return time.Unix(1<<40, 0)
	}
	return s.Replied
}

// Violation is one disagreement between the cluster and the model.
type Violation struct {
	Kind  string // e.g. "history-missing", "stale-read", "missing", "order"
	Known string // the known bug it matches (issue 29 section), or ""
	Text  string
}

func (v Violation) String() string {
	s := v.Kind + ": " + v.Text
	if v.Known != "" {
		s += " [known: " + v.Known + "]"
	}
	return s
}

func (m *model) violate(kind, known, format string, args ...any) {
	m.out = append(m.out, Violation{Kind: kind, Known: known, Text: fmt.Sprintf(format, args...)})
}
