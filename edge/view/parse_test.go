package view_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/view"
)

func TestCompileGood(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		statement string
		channel   string
		aggregate bool
		all       bool
	}{
		{name: "satori zebra", statement: "select * from `animals` where who = 'zebra'", channel: "animals", all: true},
		{name: "like", statement: "SELECT * FROM `animals` WHERE who LIKE 'z%'", channel: "animals", all: true},
		{name: "count group", statement: "SELECT count(*) AS count, who FROM `animals` GROUP BY who", channel: "animals", aggregate: true},
		{name: "not equal", statement: "select * from `ch` where test != 2", channel: "ch", all: true},
		{name: "double equals", statement: "select * from `ch` where object.param >= 1 OR object.id == 0", channel: "ch", all: true},
		{name: "double quotes", statement: `select * from ` + "`news`" + ` where title LIKE "%Japan%" OR title LIKE "%Korea%"`, channel: "news", all: true},
		{name: "projection", statement: "select test from `ch`", channel: "ch"},
		{name: "bare dotted channel", statement: "SELECT * FROM a.b_c.$d", channel: "a.b_c.$d", all: true},
		{name: "backticked odd channel", statement: "SELECT * FROM `my-ch``x`", channel: "my-ch`x", all: true},
		{name: "lower case keywords and semicolon", statement: "select a as b from c where a is not null;", channel: "c"},
		{name: "mixed case", statement: "SeLeCt A As B FrOm c WhErE a NoT iN (1, 2) AnD b BeTwEeN 1 aNd 2", channel: "c"},
		{name: "every operator", statement: "select -a + b * c / d % e - +f as x from ch where not (a = 1 or a == 2 or a != 3 or a <> 4 or a < 5 or a <= 6 or a > 7 or a >= 8)", channel: "ch"},
		{name: "functions", statement: "select lower(a), UPPER(a), length(a), substr(a, 1), substr(a, 1, 2), abs(n), round(n), round(n, 2), floor(n), ceil(n), coalesce(a, b, 'x') from ch", channel: "ch"},
		{name: "aggregates", statement: "select count(*), count(x), sum(x), avg(x), min(x), max(x), first_value(x), last_value(x) from ch", channel: "ch", aggregate: true},
		{name: "merge", statement: "select merge(*) from ch", channel: "ch", aggregate: true},
		{name: "group by alone", statement: "select who from ch group by who, lower(who)", channel: "ch", aggregate: true},
		{name: "star group by", statement: "select * from ch group by id", channel: "ch", aggregate: true},
		{name: "literals", statement: "select 1 as a, 1.5e3 as b, .5 as c, 'it''s' as d, \"say \"\"hi\"\"\" as e, true as f, false as g, null as h from ch", channel: "ch"},
		{name: "backticked segments", statement: "select `a b`.`c.d`.e from ch where `from` = 1", channel: "ch"},
		{name: "string alias", statement: "select a as 'the a' from ch", channel: "ch"},
		{name: "min int", statement: "select -9223372036854775808 as x from ch", channel: "ch"},
		{name: "utf8", statement: "select * from `caf\u00e9` where name = '\u65e5\u672c'", channel: "caf\u00e9", all: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := compile(t, tt.statement)
			if v.Channel() != tt.channel || v.Aggregates() != tt.aggregate || v.SelectsAll() != tt.all {
				t.Fatalf("channel %q aggregates %v all %v; want %q %v %v", v.Channel(), v.Aggregates(), v.SelectsAll(), tt.channel, tt.aggregate, tt.all)
			}
			if v.Statement() != tt.statement {
				t.Fatalf("Statement %q", v.Statement())
			}
		})
	}
}

func TestCompileBad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		statement string
		column    int
		reason    string // a part of the reason
	}{
		{name: "empty", statement: "", column: 1, reason: "expected SELECT"},
		{name: "not select", statement: "UPDATE x", column: 1, reason: `unexpected "UPDATE", expected SELECT`},
		{name: "misspelt from", statement: "SELECT * FORM ch", column: 10, reason: `unexpected "FORM", expected FROM`},
		{name: "no channel", statement: "SELECT a FROM", column: 14, reason: "unexpected end of statement, expected a channel name"},
		{name: "star and more", statement: "SELECT *, a FROM ch", column: 9, reason: "* must be the whole select list"},
		{name: "star later", statement: "SELECT a, * FROM ch", column: 11, reason: "* must be the whole select list"},
		{name: "unterminated string", statement: "SELECT * FROM ch WHERE a = 'abc", column: 28, reason: "unterminated string"},
		{name: "unterminated name", statement: "SELECT * FROM `ch", column: 15, reason: "unterminated quoted name"},
		{name: "empty name", statement: "SELECT * FROM ``", column: 15, reason: "empty quoted name"},
		{name: "bad character", statement: "SELECT * FROM ch WHERE a # 1", column: 26, reason: `unexpected character '#'`},
		{name: "bang alone", statement: "SELECT * FROM ch WHERE !a", column: 24, reason: `unexpected character '!'`},
		{name: "malformed number", statement: "SELECT * FROM ch WHERE a = 1abc", column: 29, reason: "malformed number"},
		{name: "exponent", statement: "SELECT * FROM ch WHERE a = 1e", column: 29, reason: "exponent without digits"},
		{name: "out of range", statement: "SELECT * FROM ch WHERE a = 1e999", column: 28, reason: "out of range"},
		{name: "negative out of range", statement: "SELECT * FROM ch WHERE a = -1e999", column: 29, reason: "out of range"},
		{name: "dangling and", statement: "SELECT * FROM ch WHERE a = 1 AND", column: 33, reason: "unexpected end of statement, expected an expression"},
		{name: "chained comparison", statement: "SELECT * FROM ch WHERE a = b = c", column: 30, reason: `unexpected "=", expected end of statement`},
		{name: "unclosed paren", statement: "SELECT * FROM ch WHERE (a = 1", column: 30, reason: `expected ")"`},
		{name: "unknown function", statement: "SELECT foo(a) FROM ch", column: 8, reason: `unknown function "foo"`},
		{name: "arity", statement: "SELECT lower(a, b) FROM ch", column: 8, reason: "lower takes one argument, not 2"},
		{name: "arity substr", statement: "SELECT substr(a) FROM ch", column: 8, reason: "substr takes 2 or 3 arguments, not 1"},
		{name: "no argument", statement: "SELECT coalesce() FROM ch", column: 8, reason: "coalesce takes at least one argument, not 0"},
		{name: "star argument", statement: "SELECT sum(*) FROM ch", column: 12, reason: "sum does not take *"},
		{name: "merge needs star", statement: "SELECT merge(a) FROM ch", column: 14, reason: "MERGE takes *"},
		{name: "aggregate in where", statement: "SELECT a FROM ch WHERE count(*) > 1", column: 24, reason: "aggregate is not allowed in WHERE"},
		{name: "aggregate in group by", statement: "SELECT count(*) FROM ch GROUP BY max(a)", column: 34, reason: "aggregate is not allowed in WHERE or GROUP BY"},
		{name: "nested aggregate", statement: "SELECT sum(count(*)) FROM ch", column: 12, reason: "may not contain another"},
		{name: "duplicate name", statement: "SELECT a, b AS a FROM ch", column: 11, reason: `two fields named "a"`},
		{name: "duplicate derived", statement: "SELECT x.a, y.a FROM ch", column: 13, reason: `two fields named "a"`},
		{name: "two spreads", statement: "SELECT merge(*), merge(*) FROM ch", column: 18, reason: "only one unnamed MERGE(*)"},
		{name: "group without by", statement: "SELECT a FROM ch GROUP a", column: 24, reason: "expected BY"},
		{name: "not without like", statement: "SELECT * FROM ch WHERE a NOT = 1", column: 30, reason: "expected LIKE, IN or BETWEEN after NOT"},
		{name: "is without null", statement: "SELECT * FROM ch WHERE a IS 1", column: 29, reason: "expected NULL"},
		{name: "between without and", statement: "SELECT * FROM ch WHERE a BETWEEN 1 OR 2", column: 36, reason: "expected AND"},
		{name: "in without paren", statement: "SELECT * FROM ch WHERE a IN 1", column: 29, reason: `expected "("`},
		{name: "as without name", statement: "SELECT a AS FROM ch", column: 13, reason: "expected a name after AS"},
		{name: "path dot", statement: "SELECT a. FROM ch", column: 11, reason: "expected a field name after '.'"},
		{name: "keyword as field", statement: "SELECT * FROM ch WHERE from = 1", column: 24, reason: "expected an expression"},
		{name: "trailing", statement: "SELECT * FROM ch WHERE a = 1 x", column: 30, reason: "expected end of statement"},
		{name: "columns count characters", statement: "SELECT * FROM `\u65e5\u672c` WHERE a = \u00e9", column: 30, reason: "unexpected character '\u00e9'"},
		{name: "too deep", statement: "SELECT * FROM ch WHERE " + strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), column: 88, reason: "nested more than 64 deep"},
		{name: "too deep not", statement: "SELECT * FROM ch WHERE " + strings.Repeat("NOT ", 70) + "a", column: 24 + 4*64, reason: "nested more than 64 deep"},
		{name: "long wild segment", statement: "SELECT * FROM ch WHERE s LIKE '%" + strings.Repeat("a_", 33) + "%'", column: 31, reason: "more than 64 characters"},
		{name: "not UTF-8", statement: "SELECT a AS `\u00e9\xff` FROM ch", column: 15, reason: "not valid UTF-8"},
		{name: "too long", statement: "SELECT * FROM ch WHERE a = '" + strings.Repeat("x", view.MaxStatement) + "'", column: view.MaxStatement + 1, reason: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := view.Compile(tt.statement)
			if err == nil {
				t.Fatalf("compiled: %v", v)
			}
			var e *view.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is not a *view.Error", err)
			}
			if e.Column != tt.column || !strings.Contains(e.Reason, tt.reason) {
				t.Fatalf("column %d reason %q; want %d and %q", e.Column, e.Reason, tt.column, tt.reason)
			}
			if got, ok := view.AsError(err); !ok || got != e {
				t.Fatal("AsError does not find it")
			}
			if !strings.HasPrefix(err.Error(), "view: column ") {
				t.Fatalf("Error() %q", err.Error())
			}
		})
	}
}
