//go:build !unix

package edgecmd

// openFilesLimit reports no limit known: the server's default applies.
func openFilesLimit() uint64 { return 0 }
