package msgpack

// wrapError is an error with a text of its own that wraps err, what
// fmt.Errorf's %w makes; package fmt is left out of the browser build.
type wrapError struct {
	msg string
	err error
}

func (e *wrapError) Error() string { return e.msg }
func (e *wrapError) Unwrap() error { return e.err }
