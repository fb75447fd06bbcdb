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
// by zero) is null, and a WHERE that is null drops the message. Once
// the message's Budget is spent, every node is null.
func (e *Evaluator) eval(n *node) value {
	if !e.spend(1) {
		return value{}
	}
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
	case opStar, opAgg: // only inside aggregates, which compile replaces
		return value{}
	}
	return e.test(n).value()
}

// test computes a condition: the operators that give booleans, without
// building values for their results; any other expression is true only
// when it is the boolean true. Once the message's Budget is spent,
// every condition is null.
func (e *Evaluator) test(n *node) tri {
	if !e.spend(1) {
		return tNull
	}
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
		var tx, ty value
		x, y := e.operand(n.args[0], &tx), e.operand(n.args[1], &ty)
		if x == nil {
			tx, x = e.eval(n.args[0]), &tx
		}
		if y == nil {
			ty, y = e.eval(n.args[1]), &ty
		}
		return negateIf(n.op == opNe, equal(x, y))
	case opLt, opLe, opGt, opGe:
		var tx, ty value
		x, y := e.operand(n.args[0], &tx), e.operand(n.args[1], &ty)
		if x == nil {
			tx, x = e.eval(n.args[0]), &tx
		}
		if y == nil {
			ty, y = e.eval(n.args[1]), &ty
		}
		return order(n.op, x, y)
	case opLike:
		return negateIf(n.not, e.like(e.eval(n.args[0]), e.eval(n.args[1])))
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

// operand is a literal's value or, into tmp, a field's; nil for any
// other node, which the caller evaluates itself. So the commonest
// operands cost no copy of a value. It does not call eval: a function in
// eval's cycle of calls that takes tmp would move it to the heap.
func (e *Evaluator) operand(n *node, tmp *value) *value {
	switch n.op {
	case opLit:
		return &n.lit
	case opField:
		if s := e.slots[n.slot]; s.start >= 0 {
			decodeTo(e.msg[s.start:s.end], tmp)
		}
		return tmp
	}
	return nil
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
	if !e.spend(len(n.args)) {
		return tNull
	}
	for _, a := range n.args[1:] {
		var ty value
		y := e.operand(a, &ty)
		if y == nil {
			ty = e.eval(a)
			y = &ty
		}
		switch equal(&x, y) {
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
	var tx, tlow, thigh value
	x, low, high := e.operand(n.args[0], &tx), e.operand(n.args[1], &tlow), e.operand(n.args[2], &thigh)
	if x == nil {
		tx, x = e.eval(n.args[0]), &tx
	}
	if low == nil {
		tlow, low = e.eval(n.args[1]), &tlow
	}
	lo := order(opGe, x, low)
	if lo == tFalse {
		return tFalse
	}
	if high == nil {
		thigh, high = e.eval(n.args[2]), &thigh
	}
	if hi := order(opLe, x, high); hi != tTrue {
		return hi
	}
	return lo
}
