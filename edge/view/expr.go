package view

import (
	"math"
	"strconv"
	"strings"
)

// Expressions, loosest binding first: OR; AND; NOT; the comparisons, IS,
// LIKE, IN and BETWEEN (one per operand: a = b = c is a fault); + and -;
// *, / and %; unary minus; literals, fields, calls and parentheses.

func (p *parser) expr() (*node, error) {
	if p.depth++; p.depth > maxNesting {
		return nil, p.fail("expression nested more than %d deep", maxNesting)
	}
	defer func() { p.depth-- }()
	return p.binary(0)
}

// levels are the binary operators of OR, AND, then + -, then * / %, each
// level binding tighter than the one before; predicate sits between AND
// and +.
var levels = []map[string]op{
	{"OR": opOr},
	{"AND": opAnd},
	nil, // NOT and the predicates
	{"+": opAdd, "-": opSub},
	{"*": opMul, "/": opDiv, "%": opMod},
}

// binary parses a left-associative chain of the operators of level.
func (p *parser) binary(level int) (*node, error) {
	switch {
	case level == len(levels):
		return p.unary()
	case levels[level] == nil:
		return p.not()
	}
	left, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		o, ok := levels[level][p.tok.text]
		if !ok || p.tok.kind != tOp && p.tok.kind != tKeyword {
			return left, nil
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		left = &node{op: o, args: []*node{left, right}, pos: left.pos, end: right.end}
	}
}

func (p *parser) not() (*node, error) {
	if !p.isKeyword("NOT") {
		return p.predicate()
	}
	pos := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.depth++; p.depth > maxNesting {
		return nil, p.fail("expression nested more than %d deep", maxNesting)
	}
	defer func() { p.depth-- }()
	arg, err := p.not()
	if err != nil {
		return nil, err
	}
	return &node{op: opNot, args: []*node{arg}, pos: pos, end: arg.end}, nil
}

var comparisons = map[string]op{"=": opEq, "==": opEq, "!=": opNe, "<>": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

func (p *parser) predicate() (*node, error) {
	left, err := p.binary(3)
	if err != nil {
		return nil, err
	}
	if o, ok := comparisons[p.tok.text]; ok && p.tok.kind == tOp {
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.binary(3)
		if err != nil {
			return nil, err
		}
		return &node{op: o, args: []*node{left, right}, pos: left.pos, end: right.end}, nil
	}
	if p.isKeyword("IS") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		n := &node{op: opIsNull, args: []*node{left}, pos: left.pos}
		if p.isKeyword("NOT") {
			n.not = true
			if err := p.advance(); err != nil {
				return nil, err
			}
		}
		if !p.isKeyword("NULL") {
			return nil, p.unexpected("NULL")
		}
		n.end = p.tok.pos + len("NULL")
		return n, p.advance()
	}
	not := false
	if p.isKeyword("NOT") {
		not = true
		if err := p.advance(); err != nil {
			return nil, err
		}
		if !p.isKeyword("LIKE") && !p.isKeyword("IN") && !p.isKeyword("BETWEEN") {
			return nil, p.unexpected("LIKE, IN or BETWEEN after NOT")
		}
	}
	switch {
	case p.isKeyword("LIKE"):
		return p.like(left, not)
	case p.isKeyword("IN"):
		return p.in(left, not)
	case p.isKeyword("BETWEEN"):
		return p.between(left, not)
	}
	return left, nil
}

func (p *parser) like(left *node, not bool) (*node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	pattern, err := p.binary(3)
	if err != nil {
		return nil, err
	}
	if pattern.op == opLit && pattern.lit.k == kString && !checkPattern(pattern.lit.b) {
		return nil, errorAt(p.lex.src, pattern.pos, "LIKE pattern has more than %d characters between two %%s with a _ among them", maxWild)
	}
	return &node{op: opLike, not: not, args: []*node{left, pattern}, pos: left.pos, end: pattern.end}, nil
}

func (p *parser) in(left *node, not bool) (*node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := p.punct("("); err != nil {
		return nil, err
	}
	list, err := p.exprList()
	if err != nil {
		return nil, err
	}
	end := p.tok.pos + 1
	if err := p.punct(")"); err != nil {
		return nil, err
	}
	return &node{op: opIn, not: not, args: append([]*node{left}, list...), pos: left.pos, end: end}, nil
}

func (p *parser) between(left *node, not bool) (*node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	low, err := p.binary(3)
	if err != nil {
		return nil, err
	}
	if err := p.keyword("AND"); err != nil {
		return nil, err
	}
	high, err := p.binary(3)
	if err != nil {
		return nil, err
	}
	return &node{op: opBetween, not: not, args: []*node{left, low, high}, pos: left.pos, end: high.end}, nil
}

func (p *parser) unary() (*node, error) {
	if !p.isOp("-") && !p.isOp("+") {
		return p.primary()
	}
	pos, minus := p.tok.pos, p.tok.text == "-"
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.depth++; p.depth > maxNesting {
		return nil, p.fail("expression nested more than %d deep", maxNesting)
	}
	defer func() { p.depth-- }()
	if minus && p.tok.kind == tNumber {
		// -9223372036854775808 is an integer although its digits alone are not.
		lit := p.tok
		if err := p.advance(); err != nil {
			return nil, err
		}
		v, ok := number(lit.text)
		switch {
		case !ok:
			return nil, errorAt(p.lex.src, lit.pos, "number %s out of range", quote(lit.text))
		case lit.text == "9223372036854775808":
			v = intValue(math.MinInt64)
		default:
			v = negate(v)
		}
		return &node{op: opLit, lit: v, pos: pos, end: lit.pos + len(lit.text)}, nil
	}
	arg, err := p.unary()
	if err != nil || !minus {
		return arg, err
	}
	return &node{op: opNeg, args: []*node{arg}, pos: pos, end: arg.end}, nil
}

func (p *parser) primary() (*node, error) {
	t := p.tok
	end := t.pos + len(t.text)
	switch {
	case t.kind == tNumber:
		v, ok := number(t.text)
		if !ok {
			return nil, p.fail("number %s out of range", quote(t.text))
		}
		return &node{op: opLit, lit: v, pos: t.pos, end: end}, p.advance()
	case t.kind == tString:
		return &node{op: opLit, lit: stringValue([]byte(t.text)), pos: t.pos, end: p.lex.i}, p.advance()
	case t.kind == tKeyword && (t.text == "TRUE" || t.text == "FALSE"):
		return &node{op: opLit, lit: boolValue(t.text == "TRUE"), pos: t.pos, end: end}, p.advance()
	case t.kind == tKeyword && t.text == "NULL":
		return &node{op: opLit, pos: t.pos, end: end}, p.advance()
	case p.isOp("("):
		if err := p.advance(); err != nil {
			return nil, err
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.isOp(")") {
			return nil, p.unexpected(`")"`)
		}
		e.pos, e.end = t.pos, p.tok.pos+1 // the parentheses belong to its text
		return e, p.advance()
	case t.kind == tIdent:
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.isOp("(") {
			return p.call(t)
		}
		return p.path(t)
	case t.kind == tQuoted:
		if err := p.advance(); err != nil {
			return nil, err
		}
		return p.path(t)
	}
	return nil, p.unexpected("an expression")
}

// path reads the rest of a field path whose first segment, t, was just
// consumed.
func (p *parser) path(t token) (*node, error) {
	n := &node{op: opField, path: []string{t.text}, pos: t.pos, end: p.tok.pos}
	for p.isOp(".") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != tIdent && p.tok.kind != tQuoted {
			return nil, p.unexpected("a field name after '.'")
		}
		n.path = append(n.path, p.tok.text)
		if err := p.advance(); err != nil {
			return nil, err
		}
		n.end = p.tok.pos
	}
	n.end = trimEnd(p.lex.src, n.end)
	return n, nil
}

// trimEnd backs off the blanks before offset end.
func trimEnd(src string, end int) int {
	for end > 0 && isSpace(src[end-1]) {
		end--
	}
	return end
}

// call reads the arguments of the function named by t, whose "(" is the
// current token.
func (p *parser) call(t token) (*node, error) {
	name := strings.ToLower(t.text)
	if err := p.advance(); err != nil {
		return nil, err
	}
	n := &node{pos: t.pos}
	if a, ok := aggregates[name]; ok {
		n.op, n.agg = opAgg, a
	} else if f, ok := functions[name]; ok {
		n.op, n.fn = opCall, f
	} else {
		return nil, errorAt(p.lex.src, t.pos, "unknown function %s", quote(t.text))
	}
	switch {
	case p.isOp("*"):
		n.args = []*node{{op: opStar, pos: p.tok.pos, end: p.tok.pos + 1}}
		if err := p.advance(); err != nil {
			return nil, err
		}
	case !p.isOp(")"):
		list, err := p.exprList()
		if err != nil {
			return nil, err
		}
		n.args = list
	}
	if !p.isOp(")") {
		return nil, p.unexpected(`")"`)
	}
	n.end = p.tok.pos + 1
	if err := p.advance(); err != nil {
		return nil, err
	}
	return n, p.checkArity(n, t)
}

// number reads a number token: an integer that fits an int64 is one,
// anything else a float; false if it is beyond a float's range.
func number(text string) (value, bool) {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return intValue(i), true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) {
		return value{}, false
	}
	return floatValue(f), true
}
