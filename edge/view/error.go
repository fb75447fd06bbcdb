package view

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Error is a statement that does not compile: Reason says what is wrong
// and Column where, counted in characters from 1 (a fault at the end of
// the statement is one past its last character). The edge sends both in
// the reason of an invalid_filter, so that the author of the statement
// can find the fault.
type Error struct {
	Column int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("view: column %d: %s", e.Column, e.Reason) }

// AsError returns the *Error in err's chain, if there is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// errorAt builds the Error of a fault at byte offset off of src.
func errorAt(src string, off int, format string, args ...any) *Error {
	off = min(max(off, 0), len(src))
	return &Error{Column: utf8.RuneCountInString(src[:off]) + 1, Reason: fmt.Sprintf(format, args...)}
}
