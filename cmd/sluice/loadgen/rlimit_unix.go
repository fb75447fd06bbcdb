//go:build unix

package loadgen

import (
	"fmt"
	"syscall"
)

// RaiseOpenFiles raises this process's soft limit on open files to its
// hard limit, which an unprivileged process may do, and returns the limit
// now in force: every connection is a file.
func RaiseOpenFiles() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, fmt.Errorf("loadgen: open files limit: %w", err)
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return 0, fmt.Errorf("loadgen: raise open files limit to %d: %w", l.Max, err)
		}
	}
	return uint64(l.Cur), nil
}
