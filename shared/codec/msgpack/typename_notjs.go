//go:build !js

package msgpack

import "fmt"

// typeName is the name of v's type, as %T writes it, for the errors of a
// caller's bug (a body of a type the codec does not know). The browser
// build says less (typename_js.go).
func typeName(v any) string { return fmt.Sprintf("%T", v) }
