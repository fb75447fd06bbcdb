// Package storetest helps tests of code built on package store: a clock
// that tests move by hand, so no test waits for time to pass.
package storetest

import (
	"runtime"
	"sync"
	"time"
)

// Clock is a store clock (store.Options.Clock) that only moves when told.
// It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// LiveHeap returns the bytes of live heap objects after a collection: for
// tests that bound what a flood makes the process hold.
func LiveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
