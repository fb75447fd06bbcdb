package chaos

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Counts are the operations of a history by kind and outcome (e.g.
// "publish ok", "subscribe count ok", "read maybe"), the messages
// delivered and the faults injected.
type Counts struct {
	Ops        map[string]int
	Checked    int // operations checked: every request answered
	Delivered  int // messages delivered to subscriptions
	Faults     int
	FaultKinds map[string]int
}

// Tally counts what h did.
func Tally(h *History) Counts {
	c := Counts{Ops: map[string]int{}, FaultKinds: map[string]int{}}
	add := func(kind string, o Outcome) {
		c.Ops[kind+" "+o.String()]++
		if o != Pending {
			c.Checked++
		}
	}
	for _, w := range h.Msgs {
		add(w.Kind.String(), w.Outcome)
	}
	for _, p := range h.Purges {
		add("purge", p.Outcome)
	}
	for _, r := range h.Reads {
		add("read", outcomeOf(r.Span, r.Err))
	}
	for _, s := range h.Subs {
		add("subscribe "+s.Mode.String(), outcomeOf(s.Span, s.Err))
		for _, b := range s.Batches {
			c.Delivered += len(b.Values)
		}
	}
	for _, f := range h.Faults {
		c.Faults++
		c.FaultKinds[f.Kind]++
	}
	return c
}

func outcomeOf(s Span, err string) Outcome {
	switch {
	case s.Replied.IsZero():
		return Pending
	case err != "":
		return Refused
	}
	return Acked
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	if c.Ops == nil {
		c.Ops, c.FaultKinds = map[string]int{}, map[string]int{}
	}
	for k, n := range o.Ops {
		c.Ops[k] += n
	}
	for k, n := range o.FaultKinds {
		c.FaultKinds[k] += n
	}
	c.Checked += o.Checked
	c.Delivered += o.Delivered
	c.Faults += o.Faults
}

// String lists the counts, one kind a line.
func (c Counts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d operations checked, %d messages delivered, %d faults %v\n", c.Checked, c.Delivered, c.Faults, c.FaultKinds)
	for _, k := range slices.Sorted(maps.Keys(c.Ops)) {
		fmt.Fprintf(&b, "  %-28s %d\n", k, c.Ops[k])
	}
	return b.String()
}

// line is one record of the operation log.
type line struct {
	at   time.Time
	text string
}

// Dump writes the operation log of h: every request, reply, delivery and
// fault, in the order sent, with times in seconds since the run began.
func Dump(h *History, w io.Writer) {
	var ls []line
	for _, m := range h.Msgs {
		ls = append(ls, line{m.Sent, describeMsg(m)})
	}
	for _, p := range h.Purges {
		ls = append(ls, line{p.Sent, fmt.Sprintf("purge of %s by c%d on e%d [%s] -> %s %s", p.Channel, p.Conn, p.Edge, p.times(), p.Outcome, p.Err)})
	}
	for _, r := range h.Reads {
		ls = append(ls, line{r.Sent, fmt.Sprintf("%s -> %d %s %s %s", r.describe(), r.Off, describeValue(r.Value), r.Err, r.Reason)})
	}
	for _, s := range h.Subs {
		ls = append(ls, line{s.Sent, subLine(s)})
	}
	for _, f := range h.Faults {
		ls = append(ls, line{f.At, "FAULT " + f.What})
		if !f.Mended.IsZero() {
			ls = append(ls, line{f.Mended, "MENDED " + f.What})
		}
	}
	slices.SortStableFunc(ls, func(a, b line) int { return a.at.Compare(b.at) })
	for _, l := range ls {
		fmt.Fprintf(w, "%9.3f %s\n", l.at.Sub(h.Begin).Seconds(), l.text)
	}
}

// maxBatchesLogged bounds the data PDUs the log shows of one
// subscription (a long run's may hold millions of messages).
const maxBatchesLogged = 200

// subLine describes a subscription with what it delivered and how it
// ended.
func subLine(s *Sub) string {
	var b strings.Builder
	b.WriteString(s.describe())
	if s.Err != "" {
		b.WriteString(" -> " + s.Err + ": " + s.Reason)
		return b.String()
	}
	for i, d := range s.Batches {
		if i == maxBatchesLogged {
			fmt.Fprintf(&b, " ...%d more, the last @%d", len(s.Batches)-i, s.Batches[len(s.Batches)-1].Off)
			break
		}
		vs := make([]string, len(d.Values))
		for i, v := range d.Values {
			vs[i] = describeValue(v)
		}
		fmt.Fprintf(&b, " [%s]@%d", strings.Join(vs, " "), d.Off)
	}
	fmt.Fprintf(&b, " end=%s", [...]string{"open", "unsubscribed", "error", "lost"}[s.End])
	if s.End == Unsubscribed {
		fmt.Fprintf(&b, "@%d", s.EndOff)
	}
	if s.EndErr != "" {
		b.WriteString(" " + s.EndErr)
	}
	return b.String()
}
