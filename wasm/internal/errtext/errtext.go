// Package errtext makes the errors and log text of the Go client without
// package fmt. The client is compiled to WebAssembly (sluice.wasm), where
// fmt would link reflect and os; together they weigh more than the
// client's own protocol code (see client-js/dist/README.md for the
// sizes). The client's messages read exactly as fmt would write them
// (errtext_test.go compares the two): Wrap is fmt.Errorf("msg: %w"),
// Kind is fmt.Errorf("%w: detail"), Text is %v for the values the
// client logs or recovers, and strconv.Quote is %q.
package errtext

import "strconv"

// wrapped is an error with a text of its own that wraps another, as
// fmt.Errorf's %w makes.
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }

// Wrap returns an error reading msg, ": " and the cause's text, which
// errors.Is and errors.As see through to cause: fmt.Errorf("msg: %w",
// cause).
//
// Wrap and Kind are not inlined: an error path is not hot, and in
// WebAssembly the inlined copies at the client's ~70 call sites took 34
// KB of sluice.wasm (10 KB gzipped).
//
//go:noinline
func Wrap(msg string, cause error) error {
	return &wrapped{msg: msg + ": " + cause.Error(), err: cause}
}

// Kind returns an error reading the text of kind (a sentinel such as
// client.ErrOptions), ": " and detail, which errors.Is matches to kind:
// fmt.Errorf("%w: detail", kind).
//
//go:noinline
func Kind(kind error, detail string) error {
	return &wrapped{msg: kind.Error() + ": " + detail, err: kind}
}

// Text renders v as fmt's %v does for nil, strings, errors, Stringers,
// booleans and numbers: what the client logs and what a recovered panic
// holds. Other values (which the client never passes) render as their
// kind's name only, "(other)".
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case string:
		return x
	case error:
		return x.Error()
	case interface{ String() string }:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case uint:
		return strconv.FormatUint(uint64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	}
	return "(other)"
}
