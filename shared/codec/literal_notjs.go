//go:build !js

package codec

import (
	"math"
	"strconv"

	"github.com/sluicehq/sluice/shared/rtm"
)

// numberLiteral is a number a decoder kept as its decimal text, such as
// encoding/json's Number. Matching it by its methods keeps encoding/json out
// of the binaries that link only the binary codecs.
type numberLiteral interface {
	String() string
	Int64() (int64, error)
	Float64() (float64, error)
}

// normalizeLiteral normalizes v if it is a number literal; ok reports
// whether it was. The browser build has none (literal_js.go).
func normalizeLiteral(v any) (n any, ok bool, err error) {
	x, ok := v.(numberLiteral)
	if !ok {
		return nil, false, nil
	}
	n, err = parseNumber(x.String())
	return n, true, err
}

// parseNumber turns a number literal into an int64 when it is an integer
// that fits, a uint64 when it is a larger positive integer that fits, and a
// float64 otherwise.
func parseNumber(s string) (any, error) {
	if isIntLiteral(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		if s[0] != '-' {
			if u, err := strconv.ParseUint(s, 10, 64); err == nil {
				return u, nil
			}
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, rtm.Invalid(rtm.MessageNumber)
	}
	return f, nil
}

func isIntLiteral(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
