package view

import (
	"math"
	"math/bits"
)

// arith applies + - * / % to two numbers. Integers stay integers while
// the result is exact and fits an int64 (7 / 2 is 3.5, as JSON users
// expect, and 6 / 2 the integer 3); otherwise the result is a float.
// Anything that is not a number (null, a string, a boolean) gives null,
// as does a division or remainder by zero and a float result that is not
// finite.
func arith(o op, a, b value) value {
	if !a.numeric() || !b.numeric() {
		return value{}
	}
	if a.k == kInt && b.k == kInt {
		if v, ok := intArith(o, a.i, b.i); ok {
			return v
		}
	}
	x, y := a.float(), b.float()
	switch o {
	case opAdd:
		return floatValue(x + y)
	case opSub:
		return floatValue(x - y)
	case opMul:
		return floatValue(x * y)
	}
	if y == 0 {
		return value{}
	}
	if o == opDiv {
		return floatValue(x / y)
	}
	return floatValue(math.Mod(x, y))
}

// intArith is arith on two integers, false when the result is not an
// exact int64 (an overflow, or a division with a remainder).
func intArith(o op, x, y int64) (value, bool) {
	switch o {
	case opAdd:
		s := x + y
		return intValue(s), (s > x) == (y > 0) || y == 0
	case opSub:
		d := x - y
		return intValue(d), (d < x) == (y > 0) || y == 0
	case opMul:
		return mulInt(x, y)
	case opDiv:
		if y == 0 {
			return value{}, true
		}
		if x%y != 0 || x == math.MinInt64 && y == -1 {
			return value{}, false
		}
		return intValue(x / y), true
	}
	if y == 0 {
		return value{}, true
	}
	if y == -1 {
		return intValue(0), true // MinInt64 % -1 would overflow in the division
	}
	return intValue(x % y), true
}

// mulInt multiplies exactly or reports that the product overflows.
func mulInt(x, y int64) (value, bool) {
	hi, lo := bits.Mul64(magnitude(x), magnitude(y))
	switch {
	case hi != 0:
		return value{}, false
	case (x < 0) != (y < 0):
		if lo > 1<<63 {
			return value{}, false
		}
		return intValue(int64(-lo)), true // -(1<<63) wraps to math.MinInt64
	case lo > math.MaxInt64:
		return value{}, false
	}
	return intValue(int64(lo)), true
}

// magnitude is |x|, which for math.MinInt64 only a uint64 holds.
func magnitude(x int64) uint64 {
	if x < 0 {
		return -uint64(x)
	}
	return uint64(x)
}

// negate is unary minus: null for what is not a number.
func negate(v value) value {
	switch {
	case v.k == kInt && v.i == math.MinInt64:
		return floatValue(-float64(v.i))
	case v.k == kInt:
		return intValue(-v.i)
	case v.k == kFloat:
		return floatValue(-v.f)
	}
	return value{}
}
