//go:build !js

package client

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// payloadExp reads the numeric exp claim of a JWT payload, the base64url
// JSON between its dots, with a small scanner rather than encoding/json.
// The browser build asks the browser instead (jwt_js.go).
func payloadExp(payload string) (float64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(payload, "="))
	if err != nil {
		return 0, false
	}
	s := string(b)
	for i := 0; ; {
		j := strings.Index(s[i:], `"exp"`)
		if j < 0 {
			return 0, false
		}
		rest := strings.TrimLeft(s[i+j+5:], " \t\r\n")
		i += j + 5
		if !strings.HasPrefix(rest, ":") {
			continue // "exp" as a value, not a key
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
		end := strings.IndexAny(rest, ",} \t\r\n")
		if end < 0 {
			return 0, false
		}
		f, err := strconv.ParseFloat(rest[:end], 64)
		return f, err == nil
	}
}
