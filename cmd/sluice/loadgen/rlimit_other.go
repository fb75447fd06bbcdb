//go:build !unix

package loadgen

import (
	"errors"
	"fmt"
)

// RaiseOpenFiles reports that this platform has no open-files limit to
// raise; the generator runs natively on Unix.
func RaiseOpenFiles() (uint64, error) {
	return 0, fmt.Errorf("loadgen: no open-files limit on this platform: %w", errors.ErrUnsupported)
}
