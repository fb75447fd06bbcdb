//go:build unix

package tls

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/caddyserver/certmagic"
)

// lockPoll is how often a blocked Lock tries again.
const lockPoll = 50 * time.Millisecond

// fileStorage is certmagic's file storage with locks taken by flock(2) on
// a file per lock name instead of certmagic's lock files. The kernel drops
// an flock when its process dies, so a crashed edge never leaves a stale
// lock behind, and nothing polls to keep a lock fresh: no goroutine
// outlives Unlock.
type fileStorage struct {
	*certmagic.FileStorage

	mu   sync.Mutex          // guards held
	held map[string]*os.File // locks this storage holds, by name
}

// newStorage returns the storage rooted at dir, creating it with
// owner-only permissions: it holds private keys.
func newStorage(dir string) (*gatedStorage, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tls: cert dir: %w", err)
	}
	return &gatedStorage{lockingStorage: &fileStorage{
		FileStorage: &certmagic.FileStorage{Path: dir},
		held:        make(map[string]*os.File),
	}}, nil
}

// lockPath is the file whose flock stands for the lock name.
func (s *fileStorage) lockPath(name string) string {
	return filepath.Join(s.Path, "locks", certmagic.StorageKeys.Safe(name)+".flock")
}

// Lock takes the lock name, waiting until it is free or ctx ends.
func (s *fileStorage) Lock(ctx context.Context, name string) error {
	t := time.NewTicker(lockPoll)
	defer t.Stop()
	for {
		ok, err := s.TryLock(ctx, name)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("tls: lock %s: %w", name, ctx.Err())
		case <-t.C:
		}
	}
}

// TryLock takes the lock name if it is free and reports whether it did.
func (s *fileStorage) TryLock(ctx context.Context, name string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	path := s.lockPath(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("tls: lock %s: %w", name, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return false, fmt.Errorf("tls: lock %s: %w", name, err)
	}
	// flock, unlike fcntl locks, is held per open file: a second open in
	// this same process waits like another process would.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("tls: lock %s: %w", name, err)
	}
	s.mu.Lock()
	s.held[name] = f
	s.mu.Unlock()
	return true, nil
}

// Unlock releases the lock name. The lock file stays: removing it would
// race with another process that has opened it and waits for it.
func (s *fileStorage) Unlock(_ context.Context, name string) error {
	s.mu.Lock()
	f, ok := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("tls: unlock %s: not held", name)
	}
	return f.Close() // closing the file releases its flock
}
