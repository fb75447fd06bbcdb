package client

import (
	"strings"
	"syscall/js"
)

// payloadExp reads the numeric exp claim of a JWT payload, the base64url
// JSON between its dots, with the browser's atob and JSON.parse:
// encoding/base64 and strconv.ParseFloat would add some 6 KB gzipped to
// sluice.wasm. exp is a claim of the payload's top level (RFC 7519); the
// native scanner (jwt_notjs.go) reads the same tokens alike.
func payloadExp(payload string) (exp float64, ok bool) {
	defer func() {
		if recover() != nil { // atob and JSON.parse throw on what they cannot read
			exp, ok = 0, false
		}
	}()
	b64 := strings.Map(func(r rune) rune {
		switch r {
		case '-':
			return '+'
		case '_':
			return '/'
		}
		return r
	}, strings.TrimRight(payload, "="))
	claims := js.Global().Get("JSON").Call("parse", js.Global().Call("atob", b64))
	if claims.Type() != js.TypeObject {
		return 0, false
	}
	if v := claims.Get("exp"); v.Type() == js.TypeNumber {
		return v.Float(), true
	}
	return 0, false
}
