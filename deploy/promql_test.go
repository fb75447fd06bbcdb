package deploy

import (
	"fmt"
	"strings"
	"testing"
)

// promqlKeywords are PromQL's words that are neither metrics nor
// functions; those in labelLists precede a list of label names.
var (
	promqlKeywords = map[string]bool{
		"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"inf": true, "nan": true, "atan2": true, "start": true, "end": true,
	}
	labelLists = map[string]bool{
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	}
)

// metricNames returns the metric names a PromQL expression selects: its
// identifiers that are not functions or aggregations (followed by "(",
// or by "by"/"without"), keywords, label names (inside {...} or the
// lists after by, on, ...), nor inside strings, ranges ([5m]) or
// Grafana's variables. Enough of PromQL's grammar for the dashboard's
// and alerts' expressions; what it cannot read is an error.
func metricNames(expr string) ([]string, error) {
	l := &promqlLexer{s: expr, labelParen: -1}
	for l.i < len(expr) {
		if err := l.step(); err != nil {
			return nil, err
		}
	}
	if l.braces != 0 || l.brackets != 0 || l.parens != 0 {
		return nil, fmt.Errorf("unbalanced {}, [] or () in %q", expr)
	}
	return l.names, nil
}

// promqlLexer reads an expression's tokens for metricNames.
type promqlLexer struct {
	s                        string
	i                        int
	names                    []string
	braces, brackets, parens int
	labelParen               int  // the paren depth of a label list being read, or -1
	expectList               bool // after by, on, ...: a "(" opens a label list
}

// step reads one token at l.i.
func (l *promqlLexer) step() error {
	c := l.s[l.i]
	expectList := l.expectList
	l.expectList = false
	switch {
	case c == ' ' || c == '\t' || c == '\n':
		l.expectList = expectList
		l.i++
	case c == '"' || c == '\'' || c == '`':
		end := closingQuote(l.s, l.i)
		if end < 0 {
			return fmt.Errorf("unterminated string at %d in %q", l.i, l.s)
		}
		l.i = end + 1
	case c == '{':
		l.braces++
		l.i++
	case c == '}':
		l.braces--
		l.i++
	case c == '[':
		l.brackets++
		l.i++
	case c == ']':
		l.brackets--
		l.i++
	case c == '(':
		l.parens++
		if expectList {
			l.labelParen = l.parens
		}
		l.i++
	case c == ')':
		if l.labelParen == l.parens {
			l.labelParen = -1
		}
		l.parens--
		l.i++
	case c == '$':
		l.i = skipVariable(l.s, l.i)
	case isDigit(c) || c == '.':
		for l.i < len(l.s) && (isIdent(l.s[l.i]) || l.s[l.i] == '.') {
			l.i++ // a number or a duration
		}
	case isIdentStart(c):
		l.word()
	default:
		l.i++ // an operator, a comma
	}
	return nil
}

// word reads an identifier, and keeps it if it names a metric.
func (l *promqlLexer) word() {
	start := l.i
	for l.i < len(l.s) && isIdent(l.s[l.i]) {
		l.i++
	}
	w := l.s[start:l.i]
	switch {
	case l.braces > 0 || l.brackets > 0 || l.labelParen >= 0:
		// a label name, or inside a range
	case labelLists[w]:
		l.expectList = true
	case promqlKeywords[w]:
	default:
		next := nextWord(l.s, l.i)
		if next != "(" && next != "by" && next != "without" {
			l.names = append(l.names, w)
		}
	}
}

// closingQuote returns the index of the quote closing the string opened
// at i, or -1.
func closingQuote(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q:
			return j
		}
	}
	return -1
}

// skipVariable skips a Grafana variable, $name or ${name}, at i.
func skipVariable(s string, i int) int {
	i++
	if i < len(s) && s[i] == '{' {
		if end := strings.IndexByte(s[i:], '}'); end >= 0 {
			return i + end + 1
		}
		return len(s)
	}
	for i < len(s) && isIdent(s[i]) {
		i++
	}
	return i
}

// nextWord returns what follows i after spaces: "(" or the identifier.
func nextWord(s string, i int) string {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	if i < len(s) && s[i] == '(' {
		return "("
	}
	start := i
	for i < len(s) && isIdent(s[i]) {
		i++
	}
	return s[start:i]
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }

// TestMetricNames checks the expression reader on the shapes the
// dashboard and alerts use.
func TestMetricNames(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		`up{job="sluice"} == 0`: "up",
		`histogram_quantile(0.99, sum by (le) (rate(a_bucket{job=~"$job", instance=~"$instance"}[$__rate_interval])))`: "a_bucket",
		`sum by (job, instance) (increase(b_total{job="x"}[10m])) > 50`:                                                "b_total",
		`c > 1000 and deriv(c[10m]) > 0`:                                           "c c",
		`sum(rate(d[5m])) by (code) / on(instance) group_left(version) e{x="a,b"}`: "d e",
		`sum without (codec) (f) unless g offset 5m`:                               "f g",
		`h / ignoring (x) group_right i`:                                           "h i",
		`min_over_time(j[${__range}]) * 1e3 + time()`:                              "j",
		`sum(k{code=~"too_many_.*|unavailable"}) > bool 0`:                         "k",
	} {
		got, err := metricNames(expr)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("metricNames(%s) = %q, %v; want %s", expr, got, err, want)
		}
	}
	for _, bad := range []string{`rate(a[5m]`, `a{b="c}`, `sum by (x (a)`} {
		if got, err := metricNames(bad); err == nil {
			t.Errorf("metricNames(%s) = %q, want an error", bad, got)
		}
	}
}
