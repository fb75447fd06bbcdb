//go:build unix

package edgecmd

import "syscall"

// openFilesLimit returns the process's limit on open files (the soft one,
// which the Go runtime raises to the hard one at start), 0 if unknown.
func openFilesLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return uint64(l.Cur)
}
