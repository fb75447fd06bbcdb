package view

// tri is the value of a condition: SQL's three-valued logic.
type tri uint8

const (
	tFalse tri = iota
	tTrue
	tNull
)

func triOf(t bool) tri {
	if t {
		return tTrue
	}
	return tFalse
}

// value is the condition as an expression's value.
func (t tri) value() value {
	if t == tNull {
		return value{}
	}
	return value{k: kBool, i: int64(t)}
}

// eval computes n for the message the evaluator has loaded. It never
// fails: what SQL would reject at run time (a type mismatch, a division
// by zero) is null, and a WHERE that is null drops the message.
func (e *Evaluator) eval(n *node) value {
	switch n.op {
	case opLit:
		return n.lit
	case opField:
		return e.field(n.slot)
	case opAggRef:
		return e.aggs[n.slot]
	case opAdd, opSub, opMul, opDiv, opMod:
		return arith(n.op, e.eval(n.args[0]), e.eval(n.args[1]))
	case opNeg:
		return negate(e.eval(n.args[0]))
	case opCall:
		return e.call(n)
	}
	return e.test(n).value()
}

// test computes a condition: the operators that give booleans, without
// building values for their results; any other expression is true only
// when it is the boolean true.
func (e *Evaluator) test(n *node) tri {
	switch n.op {
	case opAnd:
		l := e.test(n.args[0])
		if l == tFalse {
			return tFalse // the right side is not evaluated
		}
		if r := e.test(n.args[1]); r != tTrue {
			return r
		}
		return l
	case opOr:
		l := e.test(n.args[0])
		if l == tTrue {
			return tTrue
		}
		if r := e.test(n.args[1]); r != tFalse {
			return r
		}
		return l
	case opNot:
		return not(e.test(n.args[0]))
	case opEq, opNe:
		x, y := e.arg(n.args[0]), e.arg(n.args[1])
		return negateIf(n.op == opNe, equal(&x, &y))
	case opLt, opLe, opGt, opGe:
		x, y := e.arg(n.args[0]), e.arg(n.args[1])
		return order(n.op, &x, &y)
	case opLike:
		return negateIf(n.not, like(e.eval(n.args[0]), e.eval(n.args[1])))
	case opIn:
		return negateIf(n.not, e.in(n))
	case opIsNull:
		return triOf((e.eval(n.args[0]).k == kNull) != n.not)
	case opBetween:
		return negateIf(n.not, e.between(n))
	}
	v := e.eval(n)
	if v.k != kBool {
		return tNull
	}
	return tri(v.i)
}

// arg is eval for an operand, with the two commonest, fields and
// literals, taken without a call of eval.
func (e *Evaluator) arg(n *node) value {
	switch n.op {
	case opField:
		if s := e.slots[n.slot]; s.start >= 0 {
			return decode(e.msg[s.start:s.end])
		}
		return value{}
	case opLit:
		return n.lit
	}
	return e.eval(n)
}

// field is the value of the field in slot i; null if it is missing.
func (e *Evaluator) field(i int) value {
	s := e.slots[i]
	if s.start < 0 {
		return value{}
	}
	return decode(e.msg[s.start:s.end])
}

// not is NOT: null stays null.
func not(t tri) tri {
	if t == tNull {
		return tNull
	}
	return 1 - t
}

func negateIf(neg bool, t tri) tri {
	if neg {
		return not(t)
	}
	return t
}

// in is x IN (list): true if x equals an item, else null if x or an
// item is null, else false (as in SQL).
func (e *Evaluator) in(n *node) tri {
	x := e.eval(n.args[0])
	if x.k == kNull {
		return tNull
	}
	r := tFalse
	for _, a := range n.args[1:] {
		y := e.eval(a)
		switch equal(&x, &y) {
		case tTrue:
			return tTrue
		case tNull:
			r = tNull
		}
	}
	return r
}

// between is x >= low AND x <= high, three-valued.
func (e *Evaluator) between(n *node) tri {
	x, low := e.arg(n.args[0]), e.arg(n.args[1])
	lo := order(opGe, &x, &low)
	if lo == tFalse {
		return tFalse
	}
	high := e.arg(n.args[2])
	if hi := order(opLe, &x, &high); hi != tTrue {
		return hi
	}
	return lo
}
