package view

// op is what a node of an expression computes.
type op uint8

const (
	opLit     op = iota // lit
	opField             // the message field at path; slot once compiled
	opStar              // * as the argument of COUNT or MERGE
	opAnd               // args[0] AND args[1]
	opOr                // args[0] OR args[1]
	opNot               // NOT args[0]
	opEq                // = and ==
	opNe                // != and <>
	opLt                // <
	opLe                // <=
	opGt                // >
	opGe                // >=
	opAdd               // +
	opSub               // -
	opMul               // *
	opDiv               // /
	opMod               // %
	opNeg               // unary -
	opLike              // args[0] LIKE args[1]; not negates
	opIn                // args[0] IN (args[1:]...); not negates
	opIsNull            // args[0] IS NULL; not negates
	opBetween           // args[0] BETWEEN args[1] AND args[2]; not negates
	opCall              // the scalar function fn of args
	opAgg               // the aggregate agg of args[0] (parsed, not yet compiled)
	opAggRef            // the result of the aggregate numbered slot (compiled)
)

// node is one expression node. The parser fills op, pos, end and the
// fields of its op; the compiler sets slot. Nodes are never changed once
// a View is compiled, so evaluators share them.
type node struct {
	op   op
	not  bool     // NOT LIKE, NOT IN, IS NOT NULL, NOT BETWEEN
	lit  value    // opLit
	path []string // opField
	fn   fn       // opCall
	agg  aggFn    // opAgg
	args []*node
	slot int // opField: the evaluator's slot of path; opAggRef: the aggregate
	pos  int // byte offsets of the node's text in the statement
	end  int
}

// walk calls f on n and on every node below it, depth first, stopping
// below a node for which f returns false.
func (n *node) walk(f func(*node) bool) {
	if n == nil || !f(n) {
		return
	}
	for _, a := range n.args {
		a.walk(f)
	}
}
