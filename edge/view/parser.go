package view

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxStatement is the longest statement Compile takes, in bytes, and
// maxNesting how deeply its expressions may nest: bounds that keep a
// hostile filter from costing the edge's parser or evaluator much.
const (
	MaxStatement = 16 << 10
	maxNesting   = 64
)

// statement is a parsed SELECT.
type statement struct {
	star    bool   // SELECT *
	starPos int    // where the * is
	items   []item // the select list, unless star
	channel string
	where   *node
	groupBy []*node
}

// item is one entry of the select list: an expression and the name of
// its field in the result ("" for an unnamed MERGE(*), whose fields are
// spread into the result).
type item struct {
	expr  *node
	name  string
	named bool // given with AS
}

// parser is a recursive descent parser over the lexer's tokens, with one
// token of lookahead.
type parser struct {
	lex   lexer
	tok   token
	depth int
}

// parse parses a whole statement.
func parse(src string) (*statement, error) {
	if len(src) > MaxStatement {
		return nil, errorAt(src, MaxStatement, "statement longer than %d bytes", MaxStatement)
	}
	if !utf8.ValidString(src) {
		off := 0
		for off < len(src) {
			r, size := utf8.DecodeRuneInString(src[off:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			off += size
		}
		return nil, errorAt(src, off, "statement is not valid UTF-8")
	}
	p := &parser{lex: lexer{src: src}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	st, err := p.statement()
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// fail is an Error at the current token.
func (p *parser) fail(format string, args ...any) error {
	return errorAt(p.lex.src, p.tok.pos, format, args...)
}

// unexpected says what the current token is and what was wanted instead.
func (p *parser) unexpected(want string) error {
	return p.fail("unexpected %s, expected %s", describe(p.tok), want)
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of statement"
	case tString:
		return "string " + quote(t.text)
	case tQuoted:
		return "`" + t.text + "`"
	case tKeyword:
		return t.text
	}
	return quote(t.text)
}

func quote(s string) string {
	if len(s) > 32 {
		s = s[:32] + "..."
	}
	return fmt.Sprintf("%q", s)
}

func (p *parser) isKeyword(k string) bool { return p.tok.kind == tKeyword && p.tok.text == k }
func (p *parser) isOp(o string) bool      { return p.tok.kind == tOp && p.tok.text == o }

// keyword consumes the keyword k or fails.
func (p *parser) keyword(k string) error {
	if !p.isKeyword(k) {
		return p.unexpected(k)
	}
	return p.advance()
}

// punct consumes the operator o or fails.
func (p *parser) punct(o string) error {
	if !p.isOp(o) {
		return p.unexpected(quote(o))
	}
	return p.advance()
}

func (p *parser) statement() (*statement, error) {
	st := &statement{}
	if err := p.keyword("SELECT"); err != nil {
		return nil, err
	}
	if err := p.selectList(st); err != nil {
		return nil, err
	}
	if err := p.keyword("FROM"); err != nil {
		return nil, err
	}
	var err error
	if st.channel, err = p.channel(); err != nil {
		return nil, err
	}
	if p.isKeyword("WHERE") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if st.where, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.isKeyword("GROUP") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if err := p.keyword("BY"); err != nil {
			return nil, err
		}
		if st.groupBy, err = p.exprList(); err != nil {
			return nil, err
		}
	}
	if p.isOp(";") {
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	if p.tok.kind != tEOF {
		return nil, p.unexpected("end of statement")
	}
	return st, nil
}

func (p *parser) selectList(st *statement) error {
	if p.isOp("*") {
		st.star, st.starPos = true, p.tok.pos
		if err := p.advance(); err != nil {
			return err
		}
		if p.isOp(",") {
			return p.fail("* must be the whole select list")
		}
		return nil
	}
	for {
		if p.isOp("*") {
			return p.fail("* must be the whole select list")
		}
		e, err := p.expr()
		if err != nil {
			return err
		}
		it := item{expr: e}
		if p.isKeyword("AS") {
			if err := p.advance(); err != nil {
				return err
			}
			if p.tok.kind != tIdent && p.tok.kind != tQuoted && p.tok.kind != tString {
				return p.unexpected("a name after AS")
			}
			it.name, it.named = p.tok.text, true
			if err := p.advance(); err != nil {
				return err
			}
		}
		st.items = append(st.items, it)
		if !p.isOp(",") {
			return nil
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
}

// channel reads the FROM clause: a backticked name, or bare names joined
// by dots (FROM a.b is the channel "a.b").
func (p *parser) channel() (string, error) {
	if p.tok.kind == tQuoted {
		name := p.tok.text
		return name, p.advance()
	}
	var b strings.Builder
	for {
		if p.tok.kind != tIdent {
			return "", p.unexpected("a channel name")
		}
		b.WriteString(p.tok.text)
		if err := p.advance(); err != nil {
			return "", err
		}
		if !p.isOp(".") {
			return b.String(), nil
		}
		b.WriteByte('.')
		if err := p.advance(); err != nil {
			return "", err
		}
	}
}

func (p *parser) exprList() ([]*node, error) {
	var list []*node
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if !p.isOp(",") {
			return list, nil
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
}
