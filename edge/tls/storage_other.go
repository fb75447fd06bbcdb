//go:build !unix

package tls

import (
	"fmt"
	"os"

	"github.com/caddyserver/certmagic"
)

// newStorage returns certmagic's file storage rooted at dir, with its own
// lock files (there is no flock here).
func newStorage(dir string) (*gatedStorage, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tls: cert dir: %w", err)
	}
	return &gatedStorage{lockingStorage: &certmagic.FileStorage{Path: dir}}, nil
}
