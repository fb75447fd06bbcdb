//go:build !js

package websocket

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
)

// maskKeyBatch is how many bytes of masking keys one crypto/rand read
// fetches: 128 keys. Reading 4 bytes per frame costs a getrandom call each
// (a system call on kernels before 6.11, where there is no vDSO for it);
// batching makes the common key a copy out of a buffer.
const maskKeyBatch = 512

// maskKeys is a batch of random bytes and how many are used.
type maskKeys struct {
	buf  [maskKeyBatch]byte
	used int
}

// maskKeyPool holds the batches. A pool, not a buffer per connection, so
// that idle connections hold none, concurrent writers do not share a
// lock, and the batches go when the garbage collector clears the pool.
var maskKeyPool = sync.Pool{New: func() any { return &maskKeys{used: maskKeyBatch} }}

// newMaskKey returns a fresh masking key for a client frame from
// crypto/rand. RFC 6455 section 5.3 asks for keys that a page's script
// cannot predict, so that it cannot choose the bytes an intermediary sees;
// math/rand makes no such promise.
func newMaskKey() uint32 {
	k := maskKeyPool.Get().(*maskKeys)
	if k.used == len(k.buf) {
		rand.Read(k.buf[:]) // never fails: crypto/rand crashes the program instead
		k.used = 0
	}
	key := binary.LittleEndian.Uint32(k.buf[k.used:])
	k.used += 4
	maskKeyPool.Put(k)
	return key
}
