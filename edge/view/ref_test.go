package view_test

import (
	"bytes"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reference evaluator: the semantics of package view's doc, written
// again over decoded Go values (nil, bool, int64, float64, string,
// []byte, []any, map[string]any) in the plainest way, for the
// differential test. Conditions are values too: true, false or nil.

// expr is a random expression: its SQL text and its reference meaning.
type expr struct {
	sql  string
	eval func(msg map[string]any) any
}

// refNumber normalizes a number: a uint64 is a float past int64, a
// non-finite float is null.
func refNumber(v any) any {
	switch x := v.(type) {
	case uint64:
		if x > math.MaxInt64 {
			return float64(x)
		}
		return int64(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	return v
}

func refField(msg map[string]any, path []string) any {
	var v any = msg
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[seg]
	}
	return refNumber(v)
}

func isNum(v any) bool {
	switch v.(type) {
	case int64, float64:
		return true
	}
	return false
}

func toF(v any) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v.(float64)
}

// refCompare: -1, 0, 1 and whether ordered; ok false if not comparable.
func refCompare(a, b any) (c int, ordered, ok bool) {
	if a == nil || b == nil {
		return 0, false, false
	}
	if isNum(a) && isNum(b) {
		ai, aok := a.(int64)
		bi, bok := b.(int64)
		if aok && bok {
			return big.NewInt(ai).Cmp(big.NewInt(bi)), true, true
		}
		x, y := toF(a), toF(b)
		switch {
		case x < y:
			return -1, true, true
		case x > y:
			return 1, true, true
		}
		return 0, true, true
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true, true
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), true, true
		}
	case bool:
		if y, ok := b.(bool); ok {
			return boolInt(x) - boolInt(y), true, true
		}
	case []any:
		if _, ok := b.([]any); ok {
			return eqInt(reflect.DeepEqual(a, b)), false, true
		}
	case map[string]any:
		if _, ok := b.(map[string]any); ok {
			return eqInt(reflect.DeepEqual(a, b)), false, true
		}
	}
	return 0, false, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func eqInt(eq bool) int { return 1 - boolInt(eq) }

func refEq(a, b any) any {
	if a == nil || b == nil {
		return nil
	}
	c, _, ok := refCompare(a, b)
	return ok && c == 0
}

func refOrder(o string, a, b any) any {
	c, ordered, ok := refCompare(a, b)
	if !ok || !ordered {
		return nil
	}
	switch o {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func refNot(v any) any {
	if b, ok := v.(bool); ok {
		return !b
	}
	return nil
}

func refAnd(a, b any) any {
	x, xok := a.(bool)
	y, yok := b.(bool)
	switch {
	case xok && !x, yok && !y:
		return false
	case xok && yok:
		return true
	}
	return nil
}

func refOr(a, b any) any {
	return refNot(refAnd(refNot(a), refNot(b)))
}

// refArith computes exactly with big integers, then as view does:
// an exact int64 stays one, anything else is a float.
func refArith(o string, a, b any) any {
	if !isNum(a) || !isNum(b) {
		return nil
	}
	ai, aok := a.(int64)
	bi, bok := b.(int64)
	if aok && bok {
		x, y, r := big.NewInt(ai), big.NewInt(bi), new(big.Int)
		exact := true
		switch o {
		case "+":
			r.Add(x, y)
		case "-":
			r.Sub(x, y)
		case "*":
			r.Mul(x, y)
		case "/":
			if bi == 0 {
				return nil
			}
			var m big.Int
			r.QuoRem(x, y, &m)
			exact = m.Sign() == 0
		case "%":
			if bi == 0 {
				return nil
			}
			r.Rem(x, y)
		}
		if exact && r.IsInt64() {
			return r.Int64()
		}
	}
	x, y := toF(a), toF(b)
	var r float64
	switch o {
	case "+":
		r = x + y
	case "-":
		r = x - y
	case "*":
		r = x * y
	case "/":
		if y == 0 {
			return nil
		}
		r = x / y
	case "%":
		if y == 0 {
			return nil
		}
		r = math.Mod(x, y)
	}
	return refNumber(r)
}

func refNeg(a any) any {
	switch x := a.(type) {
	case int64:
		if x == math.MinInt64 {
			return -float64(x)
		}
		return -x
	case float64:
		return -x
	}
	return nil
}

// refLike translates the pattern into a regular expression.
func refLike(s, p any) any {
	x, ok1 := s.(string)
	y, ok2 := p.(string)
	if !ok1 || !ok2 {
		return nil
	}
	var re strings.Builder
	re.WriteString(`(?s)^`)
	for _, r := range y {
		switch r {
		case '%':
			re.WriteString(".*")
		case '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String()).MatchString(x)
}

func refCase(v any, upper bool) any {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if upper {
		return strings.Map(unicode.ToUpper, s)
	}
	return strings.Map(unicode.ToLower, s)
}

func refLength(v any) any {
	switch x := v.(type) {
	case string:
		return int64(utf8.RuneCountInString(x))
	case []byte:
		return int64(len(x))
	case []any:
		return int64(len(x))
	}
	return nil
}

// refSubstr slices runes: characters start .. start+count-1 from 1.
func refSubstr(v, start, count any) any {
	s, ok := v.(string)
	from, ok1 := refInt(start)
	n, ok2 := refInt(count)
	if !ok || !ok1 || !ok2 || n < 0 {
		return nil
	}
	runes := []rune(s)
	lo := max(from, 1)
	hi := min(from+n, int64(len(runes))+1) // exclusive; small ints only
	if hi <= lo {
		return ""
	}
	return string(runes[lo-1 : hi-1])
}

func refInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return int64(x), true
		}
	}
	return 0, false
}

// refIntegral is floor, ceil or round without digits.
func refIntegral(v any, f func(float64) float64) any {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		r := f(x)
		if r >= -(1<<63) && r < 1<<63 {
			return int64(r)
		}
		return r
	}
	return nil
}

func refAbs(v any) any {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return refNeg(x)
		}
		return x
	case float64:
		return math.Abs(x)
	}
	return nil
}
