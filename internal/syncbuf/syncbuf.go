// Package syncbuf is a bytes.Buffer that several goroutines may write
// while a test reads it: what an edge, a process or a client logs, seen
// by the test that started it.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it; its methods are safe for
// concurrent use. The zero value is empty and ready to use.
type Buffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
