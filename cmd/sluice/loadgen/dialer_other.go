//go:build !linux

package loadgen

import "errors"

// bindSource does nothing here: other systems may not route all of
// 127.0.0.0/8 to the loopback interface, and their port choice differs.
func bindSource(uintptr, [4]byte) error { return errors.ErrUnsupported }
