//go:build !js

package rtm

import "fmt"

// Errorf returns an *Error with a formatted reason.
//
// It is left out of the browser build, where package fmt would add some
// 80 KB gzipped to sluice.wasm for its import alone; the browser client
// builds its few errors as &Error{...} literals.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}
