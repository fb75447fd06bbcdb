package view

import (
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tEOF     tokKind = iota
	tIdent           // a bare name: letters, digits, '_' and '$', not first a digit
	tQuoted          // a `backticked` name
	tString          // a 'single' or "double" quoted string
	tNumber          // digits, an optional fraction and exponent
	tKeyword         // a reserved word; text is upper case
	tOp              // punctuation and operators: = == != <> < <= > >= + - * / % ( ) , . ;
)

// token is one lexeme: its kind, its text (unquoted for strings and
// quoted names, upper case for keywords) and its byte offset.
type token struct {
	kind tokKind
	text string
	pos  int
}

// keywords are reserved: a field of one of these names is written in
// backticks. Function names are not reserved.
var keywords = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "GROUP": true, "BY": true,
	"AS": true, "AND": true, "OR": true, "NOT": true, "LIKE": true, "IN": true,
	"IS": true, "NULL": true, "BETWEEN": true, "TRUE": true, "FALSE": true,
}

// lexer cuts a statement into tokens on demand.
type lexer struct {
	src string
	i   int
}

// next returns the next token, or an Error at the first character that
// starts no token.
func (l *lexer) next() (token, error) {
	for l.i < len(l.src) && isSpace(l.src[l.i]) {
		l.i++
	}
	start := l.i
	if start == len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := l.src[start]
	switch {
	case isIdentStart(c):
		for l.i < len(l.src) && isIdentPart(l.src[l.i]) {
			l.i++
		}
		text := l.src[start:l.i]
		if up := strings.ToUpper(text); keywords[up] {
			return token{kind: tKeyword, text: up, pos: start}, nil
		}
		return token{kind: tIdent, text: text, pos: start}, nil
	case isDigit(c) || c == '.' && start+1 < len(l.src) && isDigit(l.src[start+1]):
		return l.number()
	case c == '\'' || c == '"' || c == '`':
		return l.quoted(c)
	}
	return l.operator()
}

// number reads digits, an optional fraction and an optional exponent. A
// letter right after a number is a fault there (as in 1abc).
func (l *lexer) number() (token, error) {
	start := l.i
	l.digits()
	if l.i < len(l.src) && l.src[l.i] == '.' && l.i+1 < len(l.src) && isDigit(l.src[l.i+1]) {
		l.i++
		l.digits()
	}
	if l.i < len(l.src) && (l.src[l.i] == 'e' || l.src[l.i] == 'E') {
		j := l.i + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j >= len(l.src) || !isDigit(l.src[j]) {
			return token{}, errorAt(l.src, l.i, "malformed number: exponent without digits")
		}
		l.i = j
		l.digits()
	}
	if l.i < len(l.src) && isIdentPart(l.src[l.i]) {
		return token{}, errorAt(l.src, l.i, "malformed number: unexpected %q after it", l.rune(l.i))
	}
	return token{kind: tNumber, text: l.src[start:l.i], pos: start}, nil
}

func (l *lexer) digits() {
	for l.i < len(l.src) && isDigit(l.src[l.i]) {
		l.i++
	}
}

// quoted reads a string or a backticked name; the quote character is
// written twice to stand for itself ('it”s'). There are no backslash
// escapes: a backslash is a backslash.
func (l *lexer) quoted(q byte) (token, error) {
	start := l.i
	l.i++
	var b strings.Builder
	from := l.i
	for {
		j := strings.IndexByte(l.src[l.i:], q)
		if j < 0 {
			what := "string"
			if q == '`' {
				what = "quoted name"
			}
			return token{}, errorAt(l.src, start, "unterminated %s", what)
		}
		l.i += j + 1
		if l.i < len(l.src) && l.src[l.i] == q {
			b.WriteString(l.src[from:l.i])
			l.i++
			from = l.i
			continue
		}
		b.WriteString(l.src[from : l.i-1])
		break
	}
	kind := tString
	if q == '`' {
		kind = tQuoted
		if b.Len() == 0 {
			return token{}, errorAt(l.src, start, "empty quoted name")
		}
	}
	return token{kind: kind, text: b.String(), pos: start}, nil
}

// operators, longest first so that <= is not read as < then =.
var operators = []string{"==", "!=", "<>", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", ".", ";"}

func (l *lexer) operator() (token, error) {
	rest := l.src[l.i:]
	for _, op := range operators {
		if strings.HasPrefix(rest, op) {
			start := l.i
			l.i += len(op)
			return token{kind: tOp, text: op, pos: start}, nil
		}
	}
	return token{}, errorAt(l.src, l.i, "unexpected character %q", l.rune(l.i))
}

// rune returns the character at byte offset i, for error reasons.
func (l *lexer) rune(i int) rune {
	r, _ := utf8.DecodeRuneInString(l.src[i:])
	return r
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }
