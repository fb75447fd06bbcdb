package view

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// fn is a scalar function.
type fn uint8

const (
	fnLower fn = iota
	fnUpper
	fnLength
	fnSubstr
	fnAbs
	fnRound
	fnFloor
	fnCeil
	fnCoalesce
)

// functions maps the lower-case names of the scalar functions to them.
var functions = map[string]fn{
	"lower": fnLower, "upper": fnUpper, "length": fnLength, "substr": fnSubstr,
	"abs": fnAbs, "round": fnRound, "floor": fnFloor, "ceil": fnCeil, "coalesce": fnCoalesce,
}

// arity is the least and most arguments of each function.
var arity = [...]struct{ min, max int }{
	fnLower: {1, 1}, fnUpper: {1, 1}, fnLength: {1, 1}, fnSubstr: {2, 3},
	fnAbs: {1, 1}, fnRound: {1, 2}, fnFloor: {1, 1}, fnCeil: {1, 1}, fnCoalesce: {1, maxNesting},
}

// checkArity refuses a call of the function or aggregate n, named by
// token t, with a wrong number of arguments, or with * where a value is
// wanted.
func (p *parser) checkArity(n *node, t token) error {
	lo, hi := 1, 1
	if n.op == opCall {
		lo, hi = arity[n.fn].min, arity[n.fn].max
	}
	if len(n.args) < lo || len(n.args) > hi {
		want := argCount(lo, hi)
		return errorAt(p.lex.src, t.pos, "%s takes %s, not %d", t.text, want, len(n.args))
	}
	star := n.args[0].op == opStar
	switch {
	case n.op == opAgg && n.agg == aggMerge && !star:
		return errorAt(p.lex.src, n.args[0].pos, "MERGE takes *")
	case star && (n.op == opCall || n.agg != aggCount && n.agg != aggMerge):
		return errorAt(p.lex.src, n.args[0].pos, "%s does not take *", t.text)
	}
	return nil
}

func argCount(lo, hi int) string {
	switch {
	case lo == hi && lo == 1:
		return "one argument"
	case lo == hi:
		return string(rune('0'+lo)) + " arguments"
	case hi == maxNesting:
		return "at least one argument"
	}
	return string(rune('0'+lo)) + " or " + string(rune('0'+hi)) + " arguments"
}

// call evaluates a scalar function. Each gives null for an argument of a
// type it does not take, as the operators do. A string argument costs
// its bytes of the message's Budget.
func (e *Evaluator) call(n *node) value {
	if n.fn == fnCoalesce {
		for _, a := range n.args {
			if v := e.eval(a); v.k != kNull {
				return v
			}
		}
		return value{}
	}
	x := e.eval(n.args[0])
	if x.k == kString && !e.spend(len(x.b)) {
		return value{} // LOWER, UPPER, LENGTH and SUBSTR read the string
	}
	switch n.fn {
	case fnLower, fnUpper:
		return e.changeCase(x, n.fn == fnUpper)
	case fnLength:
		return length(x)
	case fnSubstr:
		start, count := e.eval(n.args[1]), value{k: kInt, i: math.MaxInt64}
		if len(n.args) == 3 {
			count = e.eval(n.args[2])
		}
		return substr(x, start, count)
	case fnAbs:
		if x.k == kInt && x.i < 0 || x.k == kFloat && x.f < 0 {
			return negate(x)
		}
		return numberOrNull(x)
	case fnRound:
		digits := intValue(0)
		if len(n.args) == 2 {
			digits = e.eval(n.args[1])
		}
		return round(x, digits)
	case fnFloor:
		return integral(x, math.Floor)
	case fnCeil:
		return integral(x, math.Ceil)
	}
	return value{}
}

func numberOrNull(x value) value {
	if !x.numeric() {
		return value{}
	}
	return x
}

// changeCase is lower or upper of a string, into the scratch buffer
// unless the string has nothing to change.
func (e *Evaluator) changeCase(x value, upper bool) value {
	if x.k != kString {
		return value{}
	}
	conv := unicode.ToLower
	if upper {
		conv = unicode.ToUpper
	}
	i := 0
	for i < len(x.b) {
		r, size := utf8.DecodeRune(x.b[i:])
		if conv(r) != r {
			break
		}
		i += size
	}
	if i == len(x.b) {
		return x
	}
	start := len(e.scratch)
	e.scratch = append(e.scratch, x.b[:i]...)
	for _, r := range string(x.b[i:]) { // the compiler does not copy for range
		e.scratch = utf8.AppendRune(e.scratch, conv(r))
	}
	return stringValue(e.scratch[start:len(e.scratch):len(e.scratch)])
}

// length is the number of characters of a string, bytes of binary and
// items of an array.
func length(x value) value {
	switch x.k {
	case kString:
		return intValue(int64(utf8.RuneCount(x.b)))
	case kBinary:
		return intValue(int64(len(x.b)))
	case kArray:
		return intValue(x.i)
	}
	return value{}
}

// substr is SQL's SUBSTRING(x FROM start FOR count) on characters, from
// 1: the characters at start to start+count-1 that exist, so that
// substr('abc', 0, 2) is 'a'. A negative count, or a position that is
// not an integer, gives null.
func substr(x, start, count value) value {
	s, sok := asInt(start)
	c, cok := asInt(count)
	if x.k != kString || !sok || !cok || c < 0 {
		return value{}
	}
	from, to := s, s+c // characters [from, to), counted from 1
	if c > math.MaxInt64-max(s, 0) {
		to = math.MaxInt64
	}
	from = max(from, 1)
	if to <= from {
		return stringValue(x.b[:0])
	}
	b, pos := x.b, int64(1)
	i := 0
	for ; i < len(b) && pos < from; pos++ {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	j := i
	for ; j < len(b) && pos < to; pos++ {
		_, size := utf8.DecodeRune(b[j:])
		j += size
	}
	return stringValue(b[i:j])
}

// asInt reads an integer argument: an integer, or a float with no
// fraction.
func asInt(v value) (int64, bool) {
	switch {
	case v.k == kInt:
		return v.i, true
	case v.k == kFloat && v.f == math.Trunc(v.f) && math.Abs(v.f) < 1<<62:
		return int64(v.f), true
	}
	return 0, false
}

// round rounds half away from zero to digits decimals (negative digits
// round to tens, hundreds...). With no decimals the result is an integer
// when it fits one, as floor and ceil give.
func round(x, digits value) value {
	d, ok := asInt(digits)
	if !x.numeric() || !ok {
		return value{}
	}
	d = min(max(d, -20), 20)
	if d >= 0 && x.k == kInt {
		return x
	}
	if d == 0 {
		return integral(x, math.Round)
	}
	p := math.Pow(10, float64(d))
	scaled := x.float() * p
	if math.IsInf(scaled, 0) {
		return x // so large a float has no such decimals
	}
	r := math.Round(scaled) / p
	if x.k == kInt {
		return toInt(r)
	}
	return floatValue(r)
}

// integral applies floor, ceil or round: an integer stays itself, a
// float becomes an integer when the result fits one.
func integral(x value, f func(float64) float64) value {
	switch x.k {
	case kInt:
		return x
	case kFloat:
		return toInt(f(x.f))
	}
	return value{}
}

// toInt is an integral float as an integer when it fits one.
func toInt(f float64) value {
	if f >= -(1<<63) && f < 1<<63 {
		return intValue(int64(f))
	}
	return floatValue(f)
}
