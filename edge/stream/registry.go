package stream

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
)

// Registry finds the session stream a POST names. A stream's id is 128
// random bits: whoever knows it acts as the stream's client, as whoever
// holds a WebSocket does, so it is as hard to guess as a session cookie.
type Registry struct {
	mu      sync.Mutex // guards streams
	streams map[string]entry
}

type entry struct {
	app    string // the appkey the stream was opened with
	tunnel *Tunnel
	binary bool // its codec's PDUs are binary
}

// Add registers t, opened for app, under a fresh id, which it returns.
func (r *Registry) Add(app string, t *Tunnel, binary bool) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("stream: id: %w", err)
	}
	id := hex.EncodeToString(b[:])
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.streams == nil {
		r.streams = make(map[string]entry)
	}
	r.streams[id] = entry{app: app, tunnel: t, binary: binary}
	return id, nil
}

// Get returns the stream of id opened for app, and whether its PDUs
// are binary; nil if there is none (any more).
func (r *Registry) Get(app, id string) (*Tunnel, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.streams[id]
	if !ok || e.app != app {
		return nil, false
	}
	return e.tunnel, e.binary
}

// Remove forgets the stream of id, once its session has ended.
func (r *Registry) Remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.streams, id)
}

// Len is how many streams are registered.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.streams)
}
