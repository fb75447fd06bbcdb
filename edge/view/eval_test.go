package view_test

import (
	"math"
	"testing"
)

// msg is the message the expression tests evaluate against.
var msg = M{
	"i": int64(7), "j": int64(-2), "z": int64(0), "f": 2.5, "g": -1.5,
	"s": "Zebra", "e": "", "u": "\u00c9t\u00e9 \u65e5\u672c", "t": true, "n": nil,
	"big": int64(math.MaxInt64), "small": int64(math.MinInt64),
	"a": []any{int64(1), "x"}, "m": M{"k": int64(1), "deep": M{"er": "yes"}},
	"num": "5", "bin": []byte{1, 2, 3},
}

func TestExpressions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want any
	}{
		{"literal int", "42", int64(42)},
		{"literal float", "1.5e1", 15.0},
		{"literal string", "'it''s'", "it's"},
		{"literal double quoted", `"a""b"`, `a"b`},
		{"literal null", "null", nil},
		{"negative literal", "-3", int64(-3)},
		{"field", "i", int64(7)},
		{"nested field", "m.deep.er", "yes"},
		{"missing field", "nope", nil},
		{"missing nested", "m.nope.x", nil},
		{"path through a scalar", "i.x", nil},
		{"array field", "a", []any{int64(1), "x"}},
		{"map field", "m.deep", M{"er": "yes"}},
		{"binary field", "bin", []byte{1, 2, 3}},

		{"eq int", "i = 7", true},
		{"eq double", "i == 7.0", true},
		{"ne", "i != 7", false},
		{"ne angle", "i <> 8", true},
		{"lt", "j < z", true},
		{"le", "i <= 7", true},
		{"gt float", "f > i", false},
		{"ge", "f >= 2.5", true},
		{"string order", "s < 'zebra'", true},
		{"bool order", "t > false", true},
		{"string vs number eq", "num = 5", false},
		{"string vs number ne", "num != 5", true},
		{"string vs number lt", "num < 6", nil},
		{"null eq", "n = null", nil},
		{"missing eq", "nope = 1", nil},
		{"missing ne", "nope != 1", nil},
		{"array eq", "a = a", true},
		{"map ne", "m != m.deep", true},
		{"array order", "a < a", nil},
		{"big ints exact", "big > big - 1", true},

		{"and", "t AND i = 7", true},
		{"and false wins over null", "n AND false", false},
		{"and null", "t AND n", nil},
		{"or true wins over null", "n OR true", true},
		{"or null", "false OR n", nil},
		{"or false", "false OR i = 1", false},
		{"not", "NOT t", false},
		{"not null", "NOT n", nil},
		{"not a number", "NOT i", nil},
		{"precedence", "i = 1 OR i = 7 AND s = 'Zebra'", true},
		{"parentheses", "(i = 1 OR i = 7) AND s = 'x'", false},

		{"add", "i + j", int64(5)},
		{"sub", "i - f", 4.5},
		{"mul", "j * 3", int64(-6)},
		{"div exact", "i * 2 / 7", int64(2)},
		{"div fraction", "i / 2", 3.5},
		{"div by zero", "i / z", nil},
		{"mod", "i % 3", int64(1)},
		{"mod negative", "-7 % 3", int64(-1)},
		{"mod float", "f % 1", 0.5},
		{"mod by zero", "i % 0", nil},
		{"mod min by minus one", "small % -1", int64(0)},
		{"overflow to float", "big + 1", 9223372036854775808.0},
		{"mul overflow", "big * 2", 18446744073709551614.0},
		{"min int product", "-4611686018427387904 * 2", int64(math.MinInt64)},
		{"neg min", "-small", 9223372036854775808.0},
		{"float overflow", "1e308 * 10", nil},
		{"arith on string", "s + 1", nil},
		{"arith on null", "n + 1", nil},
		{"unary plus", "+i", int64(7)},
		{"precedence arith", "1 + 2 * 3 - 4 / 2", int64(5)},

		{"like prefix", "s LIKE 'Z%'", true},
		{"like underscore", "s LIKE '_ebr_'", true},
		{"like case sensitive", "s LIKE 'z%'", false},
		{"like middle", "s LIKE '%br%'", true},
		{"like backtrack", "'aaab' LIKE '%a%ab'", true},
		{"like unicode underscore", "u LIKE '_t_ __'", true},
		{"like empty", "e LIKE '%'", true},
		{"like empty fails", "e LIKE '_'", false},
		{"not like", "s NOT LIKE '%x%'", true},
		{"like number", "i LIKE '7'", nil},
		{"in", "i IN (1, 7, 9)", true},
		{"in float", "i IN (7.0)", true},
		{"in none", "i IN (1, 2)", false},
		{"in null item", "i IN (1, null)", nil},
		{"in null item found", "i IN (null, 7)", true},
		{"not in", "s NOT IN ('a', 'b')", true},
		{"null in", "n IN (1)", nil},
		{"is null", "n IS NULL", true},
		{"missing is null", "nope IS NULL", true},
		{"is not null", "i IS NOT NULL", true},
		{"between", "i BETWEEN 1 AND 7", true},
		{"between outside", "f BETWEEN 3 AND 4", false},
		{"not between", "i NOT BETWEEN 8 AND 9", true},
		{"between null bound", "i BETWEEN n AND 9", nil},
		{"between null bound false", "i BETWEEN n AND 3", false},
		{"between strings", "s BETWEEN 'A' AND 'a'", true},

		{"lower", "lower(s)", "zebra"},
		{"upper", "UPPER(s)", "ZEBRA"},
		{"lower unicode", "lower(u)", "\u00e9t\u00e9 \u65e5\u672c"},
		{"upper unchanged", "upper('ABC')", "ABC"},
		{"lower number", "lower(i)", nil},
		{"length", "length(u)", int64(6)},
		{"length array", "length(a)", int64(2)},
		{"length binary", "length(bin)", int64(3)},
		{"length number", "length(i)", nil},
		{"substr", "substr(s, 2)", "ebra"},
		{"substr count", "substr(s, 2, 3)", "ebr"},
		{"substr zero start", "substr(s, 0, 2)", "Z"},
		{"substr unicode", "substr(u, 5, 2)", "\u65e5\u672c"},
		{"substr past end", "substr(s, 9)", ""},
		{"substr negative count", "substr(s, 1, -1)", nil},
		{"substr float start", "substr(s, 2.0, 1)", "e"},
		{"substr fraction start", "substr(s, 1.5)", nil},
		{"substr huge", "substr(s, -9223372036854775807, 9223372036854775807)", ""},
		{"abs", "abs(j)", int64(2)},
		{"abs float", "abs(g)", 1.5},
		{"abs min", "abs(small)", 9223372036854775808.0},
		{"abs string", "abs(s)", nil},
		{"round", "round(f)", int64(3)},
		{"round negative half", "round(g)", int64(-2)},
		{"round digits", "round(3.14159, 2)", 3.14},
		{"round int", "round(i, 2)", int64(7)},
		{"round tens", "round(1250, -2)", int64(1300)},
		{"round huge", "round(1e300, 10)", 1e300},
		{"floor", "floor(f)", int64(2)},
		{"floor negative", "floor(g)", int64(-2)},
		{"ceil", "ceil(f)", int64(3)},
		{"ceil int", "ceil(i)", int64(7)},
		{"floor huge", "floor(1e30)", 1e30},
		{"coalesce", "coalesce(nope, n, s, i)", "Zebra"},
		{"coalesce all null", "coalesce(nope, n)", nil},
		{"nested functions", "upper(substr(lower(s), 1, 1)) + 1", nil},
		{"function in comparison", "length(s) * 2 = 10", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := compile(t, "SELECT "+tt.expr+" AS r FROM ch")
			got, ok := apply(t, v, msg)
			if !ok {
				t.Fatal("dropped")
			}
			if r := got.(M)["r"]; !same(r, tt.want) {
				t.Fatalf("%s = %#v, want %#v", tt.expr, r, tt.want)
			}
		})
	}
}

func TestSimpleViews(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		statement string
		msg       any
		want      any // nil: dropped
	}{
		{"star keeps the message", "select * from ch where who = 'zebra'", M{"who": "zebra", "n": int64(1)}, M{"who": "zebra", "n": int64(1)}},
		{"where drops", "select * from ch where who = 'zebra'", M{"who": "lion"}, nil},
		{"null where drops", "select * from ch where test != 2", M{"other": int64(1)}, nil},
		{"not a map", "select * from ch", []any{int64(1)}, nil},
		{"a string", "select a from ch", "text", nil},
		{"null message", "select * from ch", nil, nil},
		{"projection", "select test from ch", M{"test": int64(42), "x": int64(1)}, M{"test": int64(42)}},
		{"missing is null", "select test from ch", M{"x": int64(1)}, M{"test": nil}},
		{"names sorted", "select z, a as y, m.b from ch", M{"z": int64(1), "a": int64(2), "m": M{"b": int64(3)}}, M{"z": int64(1), "y": int64(2), "b": int64(3)}},
		{"expression name", "select i + 1, lower(s) from ch", M{"i": int64(1), "s": "A"}, M{"i + 1": int64(2), "lower(s)": "a"}},
		{"nested projection", "select m from ch where m.k > 0", M{"m": M{"k": int64(1)}}, M{"m": M{"k": int64(1)}}},
		{"satori or", "select * from ch where object.param >= 1 OR object.id == 0", M{"object": M{"id": int64(0)}}, M{"object": M{"id": int64(0)}}},
		{"satori news", `select * from news where title LIKE "%Japan%" OR title LIKE "%Korea%"`, M{"title": "South Korea"}, M{"title": "South Korea"}},
		{"empty map", "select * from ch", M{}, M{}},
		{"where on non-boolean", "select * from ch where i", M{"i": int64(1)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := compile(t, tt.statement)
			got, ok := apply(t, v, tt.msg)
			if ok != (tt.want != nil) || !same(got, tt.want) {
				t.Fatalf("got %#v (kept %v), want %#v", got, ok, tt.want)
			}
			if m := v.Match(enc(t, tt.msg)); m != ok {
				t.Fatalf("Match %v, Append kept %v", m, ok)
			}
		})
	}
}

// TestDuplicateKeys checks that a key given twice in a (non-canonical)
// message counts with its last value, as the edge's decoders read it.
func TestDuplicateKeys(t *testing.T) {
	t.Parallel()
	// {"a": {"b": 1}, "a": 2}
	m := []byte{0x82, 0xa1, 'a', 0x81, 0xa1, 'b', 0x01, 0xa1, 'a', 0x02}
	v := compile(t, "select a.b, a as x from ch")
	out, ok := v.Append(nil, m)
	if !ok {
		t.Fatal("dropped")
	}
	if got := dec(t, out); !same(got, M{"b": nil, "x": int64(2)}) {
		t.Fatalf("got %#v", got)
	}
}

// TestMalformed checks that a message that is not valid msgpack is
// dropped, not evaluated.
func TestMalformed(t *testing.T) {
	t.Parallel()
	v := compile(t, "select a from ch where a is null or a is not null")
	for _, b := range [][]byte{
		nil,
		{0x81, 0xa1, 'a'},                         // cut
		{0x81, 0xa1, 'a', 0x01, 0xc0},             // extra data
		{0x81, 0xa1, 'a', 0xa2, 0xc3, 0x28},       // bad UTF-8 in a field the view reads
		{0x81, 0x01, 0x01},                        // an integer key
		{0xdf, 0xff, 0xff, 0xff, 0xff},            // forged length
		{0x81, 0xa1, 'b', 0xd6, 0xff, 0, 0, 0, 1}, // an extension
	} {
		if _, ok := v.Append(nil, b); ok {
			t.Errorf("%x kept", b)
		}
	}
}
