package view

import (
	"slices"
	"strings"
)

// compiler turns a parsed statement into a View: it checks where
// aggregates may appear, names the result's fields, gives each field
// path a slot and, in an aggregate view, replaces each aggregate call
// (and each field read outside one) by a reference to its result.
type compiler struct {
	src  string
	v    *View
	ends map[*pathNode]bool  // path nodes that a field ends at
	refs map[*node]*pathNode // each field node's path node
}

func compile(src string, st *statement) (*View, error) {
	v := &View{statement: src, channel: st.channel, star: st.star, where: st.where, groupBy: st.groupBy, spread: -1}
	v.root.slot = -1
	c := &compiler{src: src, v: v, ends: map[*pathNode]bool{}, refs: map[*node]*pathNode{}}
	v.aggregate = len(st.groupBy) > 0
	for _, it := range st.items {
		v.aggregate = v.aggregate || hasAggregate(it.expr)
	}
	for _, n := range append([]*node{st.where}, st.groupBy...) {
		if a := firstAggregate(n); a != nil {
			return nil, errorAt(src, a.pos, "an aggregate is not allowed in WHERE or GROUP BY")
		}
	}
	if err := c.items(st.items); err != nil {
		return nil, err
	}
	// In a simple view only the select list reaches the result; in an
	// aggregate view GROUP BY values do too.
	c.fields(st.where, v.aggregate)
	for _, n := range st.groupBy {
		c.fields(n, true)
	}
	for _, it := range v.items {
		c.fields(it.expr, true)
	}
	for _, a := range v.aggs {
		c.fields(a.arg, true)
	}
	for _, a := range v.aggs {
		v.merges = v.merges || a.fn == aggMerge
	}
	v.slots = v.root.number(0, c.ends)
	for n, p := range c.refs {
		n.slot = p.slot
	}
	return v, nil
}

// items names the select list, checks its aggregates and, in an
// aggregate view, makes each item an expression over aggregate results.
func (c *compiler) items(items []item) error {
	seen := map[string]bool{}
	for _, it := range items {
		if !it.named {
			it.name = c.name(it.expr)
		}
		if err := c.checkNesting(it.expr, false); err != nil {
			return err
		}
		if c.v.aggregate {
			if it.expr.op == opAgg && it.expr.agg == aggMerge && !it.named {
				if c.v.spread >= 0 {
					return errorAt(c.src, it.expr.pos, "only one unnamed MERGE(*) may spread its fields")
				}
				c.v.spread = len(c.v.aggs)
				c.aggregates(it.expr)
				continue
			}
			c.aggregates(it.expr)
		} else if it.expr.op == opAgg && it.expr.agg == aggMerge {
			return errorAt(c.src, it.expr.pos, "MERGE needs an aggregate view")
		}
		if seen[it.name] {
			return errorAt(c.src, it.expr.pos, "the result has two fields named %s", quote(it.name))
		}
		seen[it.name] = true
		c.v.items = append(c.v.items, it)
	}
	slices.SortFunc(c.v.items, func(a, b item) int { return strings.Compare(a.name, b.name) })
	return nil
}

// name is the result field of an unnamed item: a field's last segment
// (SELECT a.b gives {"b": ...}) or the expression's text as written.
func (c *compiler) name(n *node) string {
	if n.op == opField {
		return n.path[len(n.path)-1]
	}
	return c.src[n.pos:n.end]
}

// checkNesting refuses an aggregate inside another.
func (c *compiler) checkNesting(n *node, inside bool) error {
	if n.op == opAgg {
		if inside {
			return errorAt(c.src, n.pos, "an aggregate may not contain another")
		}
		inside = true
	}
	for _, a := range n.args {
		if err := c.checkNesting(a, inside); err != nil {
			return err
		}
	}
	return nil
}

// aggregates rewrites the aggregate calls under n into references to
// the view's aggregates, and a field outside any into LAST_VALUE of it:
// an aggregate view's plain fields are those of the group's last message.
func (c *compiler) aggregates(n *node) {
	switch {
	case n.op == opAgg:
		c.v.aggs = append(c.v.aggs, aggSpec{fn: n.agg, arg: n.args[0]})
		n.op, n.slot, n.args = opAggRef, len(c.v.aggs)-1, nil
		return
	case n.op == opField:
		f := *n
		c.v.aggs = append(c.v.aggs, aggSpec{fn: aggLast, arg: &f})
		n.op, n.slot, n.path = opAggRef, len(c.v.aggs)-1, nil
		return
	}
	for _, a := range n.args {
		c.aggregates(a)
	}
}

// fields gives every field node under n its path node; check says
// whether their values may reach the result.
func (c *compiler) fields(n *node, check bool) {
	n.walk(func(f *node) bool {
		if f.op == opField {
			p := c.v.root.add(f.path)
			c.ends[p] = true
			c.refs[f] = p
			p.check = p.check || check
		}
		return true
	})
}

func hasAggregate(n *node) bool { return firstAggregate(n) != nil }

// firstAggregate returns the first aggregate call under n, if any.
func firstAggregate(n *node) *node {
	var found *node
	n.walk(func(a *node) bool {
		if found == nil && a.op == opAgg {
			found = a
		}
		return found == nil
	})
	return found
}
