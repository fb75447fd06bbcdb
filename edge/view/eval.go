package view

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
	case opAnd:
		return e.and(n)
	case opOr:
		return e.or(n)
	case opNot:
		return not(e.eval(n.args[0]))
	case opEq:
		return equal(e.eval(n.args[0]), e.eval(n.args[1]))
	case opNe:
		return not(equal(e.eval(n.args[0]), e.eval(n.args[1])))
	case opLt, opLe, opGt, opGe:
		return order(n.op, e.eval(n.args[0]), e.eval(n.args[1]))
	case opAdd, opSub, opMul, opDiv, opMod:
		return arith(n.op, e.eval(n.args[0]), e.eval(n.args[1]))
	case opNeg:
		return negate(e.eval(n.args[0]))
	case opLike:
		return negateIf(n.not, like(e.eval(n.args[0]), e.eval(n.args[1])))
	case opIn:
		return negateIf(n.not, e.in(n))
	case opIsNull:
		return boolValue((e.eval(n.args[0]).k == kNull) != n.not)
	case opBetween:
		return negateIf(n.not, e.between(n))
	case opCall:
		return e.call(n)
	}
	return value{}
}

// field is the value of the field in slot i; null if it is missing.
func (e *Evaluator) field(i int) value {
	s := e.slots[i]
	if s.start < 0 {
		return value{}
	}
	return decode(e.msg[s.start:s.end])
}

// and is three-valued: false if either side is false (the right side is
// then not evaluated when the left is), true if both are true, else null.
func (e *Evaluator) and(n *node) value {
	l, lok := e.eval(n.args[0]).truth()
	if lok && !l {
		return boolValue(false)
	}
	r, rok := e.eval(n.args[1]).truth()
	switch {
	case rok && !r:
		return boolValue(false)
	case lok && rok:
		return boolValue(true)
	}
	return value{}
}

// or is three-valued: true if either side is true, false if both are
// false, else null.
func (e *Evaluator) or(n *node) value {
	l, lok := e.eval(n.args[0]).truth()
	if lok && l {
		return boolValue(true)
	}
	r, rok := e.eval(n.args[1]).truth()
	switch {
	case rok && r:
		return boolValue(true)
	case lok && rok:
		return boolValue(false)
	}
	return value{}
}

// not is NOT: null stays null, as does anything not a boolean.
func not(v value) value {
	t, ok := v.truth()
	if !ok {
		return value{}
	}
	return boolValue(!t)
}

func negateIf(neg bool, v value) value {
	if neg {
		return not(v)
	}
	return v
}

// in is x IN (list): true if x equals an item, else null if x or an
// item is null, else false (as in SQL).
func (e *Evaluator) in(n *node) value {
	x := e.eval(n.args[0])
	if x.k == kNull {
		return value{}
	}
	unknown := false
	for _, a := range n.args[1:] {
		t, ok := equal(x, e.eval(a)).truth()
		if ok && t {
			return boolValue(true)
		}
		unknown = unknown || !ok
	}
	if unknown {
		return value{}
	}
	return boolValue(false)
}

// between is x >= low AND x <= high, three-valued.
func (e *Evaluator) between(n *node) value {
	x := e.eval(n.args[0])
	lo, lok := order(opGe, x, e.eval(n.args[1])).truth()
	hi, hok := order(opLe, x, e.eval(n.args[2])).truth()
	switch {
	case lok && !lo, hok && !hi:
		return boolValue(false)
	case lok && hok:
		return boolValue(true)
	}
	return value{}
}
