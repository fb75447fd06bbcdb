//go:build !js

package websocket

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// DeflateOptions turn on permessage-deflate (RFC 7692) for a connection:
// a server answers a client's offer with it, a client offers it. nil
// means off.
//
// Both directions are negotiated without context takeover: each message
// is compressed on its own, with a fresh window. That costs some ratio on
// streams of similar messages, but a connection then keeps no compressor
// or decompressor state between messages (a flate writer is some 600 KiB,
// a reader 40 KiB): both are taken from a process-wide pool for one
// message and put back, so an idle connection costs what it did without
// compression. It also makes a message's compressed frame the same bytes
// for every connection, so the edge compresses a message once per
// fan-out worker, not once per subscriber.
type DeflateOptions struct {
	// Threshold is the size below which a message is sent uncompressed
	// (RSV1 clear): the deflate stream of a small message is hardly
	// smaller than the message, and costs CPU for each one. Default
	// DefaultDeflateThreshold; a negative value compresses every message.
	Threshold int
}

// DefaultDeflateThreshold is DeflateOptions.Threshold's default: a JSON
// chat message's frame (about 240 bytes) shrinks by a quarter without
// context takeover, for some 15 µs of CPU, while a 2 KiB JSON object's
// shrinks 3.5 times (docs/benchmarks/delivery.md).
const DefaultDeflateThreshold = 256

// threshold returns the effective threshold of o.
func (o *DeflateOptions) threshold() int {
	switch {
	case o.Threshold < 0:
		return 0
	case o.Threshold == 0:
		return DefaultDeflateThreshold
	}
	return o.Threshold
}

// The extension's name and parameters (RFC 7692 section 7.1).
const (
	extDeflate           = "permessage-deflate"
	serverNoTakeover     = "server_no_context_takeover"
	clientNoTakeover     = "client_no_context_takeover"
	serverMaxWindowBits  = "server_max_window_bits"
	clientMaxWindowBits  = "client_max_window_bits"
	deflateAnswer        = extDeflate + "; " + serverNoTakeover + "; " + clientNoTakeover
	deflateOffer         = deflateAnswer
	maxWindowBits        = 15
	minWindowBits        = 8
	extensionsHeaderName = "Sec-WebSocket-Extensions"
)

// extension is one element of a Sec-WebSocket-Extensions list.
type extension struct {
	name   string
	params []extParam
}

// extParam is an extension parameter; value is "" when it has none.
type extParam struct {
	name, value string
	hasValue    bool
}

// errExtensionSyntax reports a Sec-WebSocket-Extensions value that is not
// a list of extensions as RFC 6455 section 9.1 defines it.
var errExtensionSyntax = errors.New("malformed Sec-WebSocket-Extensions")

// parseExtensions parses every Sec-WebSocket-Extensions line of h, in
// order: extension *( ";" param [ "=" (token | quoted-string) ] ), comma
// separated. Names are lower-cased (extension names and parameters are
// case-insensitive tokens in practice: browsers send them lower case).
func parseExtensions(h http.Header) ([]extension, error) {
	var out []extension
	for _, line := range h.Values(extensionsHeaderName) {
		p := extParser{s: line}
		for {
			p.space()
			if p.done() {
				break
			}
			if p.peek() == ',' { // empty list elements are allowed
				p.i++
				continue
			}
			e, err := p.extension()
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %w", errExtensionSyntax, line, err)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// extParser reads one header value.
type extParser struct {
	s string
	i int
}

func (p *extParser) done() bool { return p.i >= len(p.s) }
func (p *extParser) peek() byte { return p.s[p.i] }

func (p *extParser) space() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// extension reads one extension and the comma after it, if any.
func (p *extParser) extension() (extension, error) {
	name, err := p.token()
	if err != nil {
		return extension{}, err
	}
	e := extension{name: strings.ToLower(name)}
	for {
		p.space()
		if p.done() {
			return e, nil
		}
		switch p.peek() {
		case ',':
			p.i++
			return e, nil
		case ';':
			p.i++
			p.space()
			par, err := p.param()
			if err != nil {
				return e, err
			}
			e.params = append(e.params, par)
		default:
			return e, fmt.Errorf("unexpected %q at %d", p.peek(), p.i)
		}
	}
}

// param reads name [= value].
func (p *extParser) param() (extParam, error) {
	name, err := p.token()
	if err != nil {
		return extParam{}, err
	}
	par := extParam{name: strings.ToLower(name)}
	p.space()
	if p.done() || p.peek() != '=' {
		return par, nil
	}
	p.i++
	p.space()
	par.hasValue = true
	if !p.done() && p.peek() == '"' {
		par.value, err = p.quoted()
	} else {
		par.value, err = p.token()
	}
	return par, err
}

// token reads an RFC 7230 token.
func (p *extParser) token() (string, error) {
	start := p.i
	for !p.done() && isTokenChar(p.s[p.i]) {
		p.i++
	}
	if p.i == start {
		return "", fmt.Errorf("token expected at %d", start)
	}
	return p.s[start:p.i], nil
}

// quoted reads a quoted-string and returns its content. RFC 7692 allows
// a parameter's value quoted, which must then still be a token.
func (p *extParser) quoted() (string, error) {
	p.i++ // the opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if p.done() {
				return "", errors.New("unterminated quoted-string")
			}
			c = p.s[p.i]
			p.i++
		}
		b.WriteByte(c)
	}
	return "", errors.New("unterminated quoted-string")
}

// isTokenChar reports whether c may appear in an RFC 7230 token.
func isTokenChar(c byte) bool {
	if c <= ' ' || c >= 0x7f {
		return false
	}
	return !strings.ContainsRune(`()<>@,;:\"/[]?={}`, rune(c))
}

// windowBits reports whether v is a window size RFC 7692 allows: a
// decimal 8 to 15 without leading zeros.
func windowBits(v string) (int, bool) {
	switch {
	case len(v) == 1 && v[0] >= '8' && v[0] <= '9':
		return int(v[0] - '0'), true
	case len(v) == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5':
		return 10 + int(v[1]-'0'), true
	}
	return 0, false
}

// acceptDeflate picks the first of the client's permessage-deflate offers
// the server can take and returns the answer for it, "" for none. An
// offer is declined, as RFC 7692 section 5 says, when a parameter is
// unknown, repeated or has an invalid value, or when it asks the server
// for a window below 32 KiB: compress/flate always uses 32 KiB, and the
// client's inflater may have only the window it asked for. A malformed
// header is not an error of the handshake: nothing is negotiated.
func acceptDeflate(h http.Header) string {
	exts, err := parseExtensions(h)
	if err != nil {
		return ""
	}
	for _, e := range exts {
		if e.name == extDeflate && deflateOfferOK(e.params) {
			return deflateAnswer
		}
	}
	return ""
}

// deflateOfferOK reports whether the server accepts an offer with these
// parameters. Whatever the client asked, the answer is no context
// takeover both ways: client_no_context_takeover may be sent without the
// client offering it (section 7.1.1.2), and server_no_context_takeover is
// a choice of the server's that the answer announces.
func deflateOfferOK(params []extParam) bool {
	seen := make(map[string]bool, len(params))
	for _, p := range params {
		if seen[p.name] {
			return false
		}
		seen[p.name] = true
		switch p.name {
		case serverNoTakeover, clientNoTakeover:
			if p.hasValue {
				return false
			}
		case serverMaxWindowBits:
			if bits, ok := windowBits(p.value); !ok || bits < maxWindowBits {
				return false
			}
		case clientMaxWindowBits:
			// Without a value: the client can limit its window. Its
			// messages inflate with any window, so the answer omits it.
			if _, ok := windowBits(p.value); p.hasValue && !ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// checkDeflateAnswer checks a server's Sec-WebSocket-Extensions answer to
// a client that offered deflateOffer (or, when offered is false, nothing)
// and reports whether permessage-deflate is on. RFC 6455 section 4.1
// fails the connection for an extension that was not offered; RFC 7692
// section 7.1 for parameters that were not, or not valid. The server
// must honour server_no_context_takeover: this side keeps no inflater
// between messages.
func checkDeflateAnswer(h http.Header, offered bool) (bool, error) {
	exts, err := parseExtensions(h)
	if err != nil {
		return false, err
	}
	if len(exts) == 0 {
		return false, nil
	}
	if !offered || len(exts) > 1 || exts[0].name != extDeflate {
		return false, fmt.Errorf("server chose extensions %q, which were not offered", h.Values(extensionsHeaderName))
	}
	seen := make(map[string]bool, len(exts[0].params))
	for _, p := range exts[0].params {
		if seen[p.name] {
			return false, fmt.Errorf("permessage-deflate parameter %s repeated", p.name)
		}
		seen[p.name] = true
		switch p.name {
		case serverNoTakeover, clientNoTakeover:
			if p.hasValue {
				return false, fmt.Errorf("permessage-deflate parameter %s has a value", p.name)
			}
		case serverMaxWindowBits:
			// A smaller window of the server's: inflating needs nothing.
			if _, ok := windowBits(p.value); !ok {
				return false, fmt.Errorf("permessage-deflate %s=%q is not 8 to 15", p.name, p.value)
			}
		default:
			// client_max_window_bits included: it was not offered.
			return false, fmt.Errorf("permessage-deflate parameter %s was not offered", p.name)
		}
	}
	if !seen[serverNoTakeover] {
		return false, errors.New("permessage-deflate answer lacks server_no_context_takeover, which was offered")
	}
	return true, nil
}
