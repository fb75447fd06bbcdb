package view_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// fuzzStatements cover every operator, function and aggregate, for the
// evaluator's fuzzer and as seeds of the parser's.
var fuzzStatements = []string{
	"SELECT * FROM ch",
	"SELECT * FROM ch WHERE a = 1 AND b.c > 2.5 OR s LIKE '%x_' OR NOT t",
	"SELECT a, b.c, s AS str, a + b.c * 2 - 1 / 3 % 2 AS n FROM ch WHERE a IS NOT NULL",
	"SELECT lower(s) AS l, upper(s) AS u, length(s), substr(s, 2, 3), abs(a), round(a, 1), floor(a), ceil(a), coalesce(x, s) FROM ch",
	"SELECT * FROM ch WHERE a IN (1, 'x', null) OR a BETWEEN -1 AND 1 OR a NOT BETWEEN 2 AND 3 OR s NOT LIKE 'a%'",
	"SELECT count(*), count(a), sum(a), avg(a), min(s), max(s), first_value(b), last_value(b.c) FROM ch GROUP BY s, a > 1",
	"SELECT merge(*), count(*) AS n FROM ch WHERE a != 0",
	"SELECT merge(*) AS m, s FROM ch GROUP BY lower(s)",
	"SELECT * FROM ch GROUP BY s",
	"SELECT `a b`.`c`, -a AS neg FROM `ch` WHERE `a b`.`c` <> 'x'",
}

// FuzzCompile checks that Compile never panics, that every error is an
// *Error whose column lies inside the statement (or just past its end),
// and that a view it compiles evaluates a few messages without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzStatements {
		f.Add(s)
	}
	for _, s := range []string{"", "SELECT", "SELECT * FROM", "select 'abc", "select `", "select 1e", "SELECT ((((a", "SELECT a FROM b WHERE c = 1 =", "SELECT \u00e9 FROM x"} {
		f.Add(s)
	}
	msgs := [][]byte{
		enc(f, M{"a": int64(1), "s": "xyz", "b": M{"c": 3.5}}),
		enc(f, M{"a": "1", "b": []any{int64(1)}, "t": true}),
		{0x80},
	}
	f.Fuzz(func(t *testing.T, statement string) {
		v, err := view.Compile(statement)
		if err != nil {
			var e *view.Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: %v is not a *view.Error", statement, err)
			}
			if n := utf8.RuneCountInString(statement); e.Column < 1 || e.Column > n+1 {
				t.Fatalf("%q: column %d outside 1..%d", statement, e.Column, n+1)
			}
			if e.Reason == "" {
				t.Fatalf("%q: no reason", statement)
			}
			return
		}
		if v.Statement() != statement {
			t.Fatalf("Statement %q", v.Statement())
		}
		a := v.NewAggregate()
		for _, m := range msgs {
			checkResult(t, v, m)
			a.Add(m)
		}
		for _, r := range a.Flush(nil) {
			checkItem(t, r)
		}
	})
}

// FuzzEval checks that evaluating any bytes as a message never panics,
// and that what a view keeps is a valid msgpack item: the message itself
// for SELECT *, else a result whose every byte Scanner accepts.
func FuzzEval(f *testing.F) {
	seeds := [][]byte{
		enc(f, M{"a": int64(1), "s": "xyz", "b": M{"c": 3.5}, "t": false}),
		enc(f, M{"a": 0.5, "s": "a\u00e9", "x": nil, "a b": M{"c": "y"}}),
		enc(f, M{"a": int64(-7), "b": []any{int64(1), "x"}, "s": []byte("bin")}),
		{0x81, 0xa1, 'a', 0xa2, 0xc3, 0x28},
		{0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x81, 0xa1, 'c', 0x02},
		{0xdf, 0xff, 0xff, 0xff, 0xff},
		{0x81, 0xa1, 'a', 0xd6, 0xff, 0, 0, 0, 1},
		{0x91, 0x01},
	}
	for i := range fuzzStatements {
		for _, s := range seeds {
			f.Add(uint8(i), s)
		}
	}
	views := make([]*view.View, len(fuzzStatements))
	for i, s := range fuzzStatements {
		views[i] = compile(f, s)
	}
	f.Fuzz(func(t *testing.T, which uint8, msg []byte) {
		v := views[int(which)%len(views)]
		checkResult(t, v, msg)
		a := v.NewAggregate()
		a.Add(msg)
		a.Add(msg)
		for _, r := range a.Flush(nil) {
			if strings.HasPrefix(v.Statement(), "SELECT * ") { // each group's last message
				if !bytes.Equal(r, msg) {
					t.Fatalf("%s gave %x for %x", v.Statement(), r, msg)
				}
				continue
			}
			checkItem(t, r)
		}
	})
}

// checkResult evaluates v on msg and checks what it keeps.
func checkResult(t *testing.T, v *view.View, msg []byte) {
	t.Helper()
	out, ok := v.Append(nil, msg)
	if ok != (v.Match(msg) && !v.Aggregates()) {
		t.Fatalf("%s: Append kept %v, Match differs", v.Statement(), ok)
	}
	switch {
	case !ok:
		if len(out) != 0 {
			t.Fatalf("dropped but appended %x", out)
		}
	case v.SelectsAll():
		if !bytes.Equal(out, msg) {
			t.Fatalf("SELECT * gave %x for %x", out, msg)
		}
	default:
		checkItem(t, out)
	}
}

// checkItem checks that b is one valid msgpack map.
func checkItem(t *testing.T, b []byte) {
	t.Helper()
	var s wire.Scanner
	end, err := s.Skip(b, 0, 0)
	if err != nil || end != len(b) || !wire.IsMap(b) {
		t.Fatalf("result %x: end %d of %d, %v", b, end, len(b), err)
	}
}
