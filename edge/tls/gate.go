package tls

import (
	"context"
	"errors"
	"sync"

	"github.com/caddyserver/certmagic"
)

// errStorageClosed refuses the writes certmagic attempts after Close.
var errStorageClosed = errors.New("tls: certificate manager closed")

// lockingStorage is a certmagic storage that can also try a lock without
// waiting (certmagic uses TryLock when the storage has it).
type lockingStorage interface {
	certmagic.Storage
	certmagic.TryLocker
}

// gatedStorage lets Close wait for the writes in flight and refuses later
// ones. certmagic renews in the goroutines of its package-wide job queue,
// which outlive the cache's Stop: without the gate, a renewal that was
// under way could still write the certificate directory after the
// manager closed (a test's TempDir cleanup saw "directory not empty").
// Deletes stay open: they create nothing, and a renewal cut short cleans
// up its challenge with one (certmagic's CleanUp stops the challenge
// listener only after its Delete succeeds).
type gatedStorage struct {
	lockingStorage

	mu     sync.RWMutex // held shared by each write; exclusively by close
	closed bool
}

func (g *gatedStorage) enter() error {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return errStorageClosed
	}
	return nil
}

// close waits for the writes in flight and refuses the ones after.
func (g *gatedStorage) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

func (g *gatedStorage) Store(ctx context.Context, key string, value []byte) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.mu.RUnlock()
	return g.lockingStorage.Store(ctx, key, value)
}

// Lock is gated as well since taking a lock creates files; a waiting Lock
// holds the gate only until its context ends, and Close cancels those
// contexts before it closes the gate.
func (g *gatedStorage) Lock(ctx context.Context, name string) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.mu.RUnlock()
	return g.lockingStorage.Lock(ctx, name)
}

func (g *gatedStorage) TryLock(ctx context.Context, name string) (bool, error) {
	if err := g.enter(); err != nil {
		return false, err
	}
	defer g.mu.RUnlock()
	return g.lockingStorage.TryLock(ctx, name)
}
