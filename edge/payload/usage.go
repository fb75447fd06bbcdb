package payload

import (
	"sync/atomic"
	"time"
)

// Linger is how long a codec is still encoded after its last connection
// closed: longer than clients dropped together take to come back (their
// reconnect backoff is seconds).
const Linger = int64(time.Minute)

// Usage is which codecs are in use on an edge: its open connections per
// codec, and when each codec's last one closed. A publish encodes its
// message in the codecs it names (Codecs). Every method is safe for
// concurrent use.
type Usage struct {
	open [NumCodecs]atomic.Int64
	// gone is, per codec, the clock's time when its last connection
	// closed (0: none did): a publish encodes it for Linger after.
	gone [NumCodecs]atomic.Int64
	now  func() int64 // the clock, in nanoseconds (the store's: store.Store.Now)
}

// NewUsage returns a Usage with no connection open, on the clock now.
func NewUsage(now func() int64) *Usage { return &Usage{now: now} }

// Opened counts a connection of the codec at index i.
func (u *Usage) Opened(i int) { u.open[i].Add(1) }

// Closed uncounts it, noting when the codec's last one closed.
func (u *Usage) Closed(i int) {
	if u.open[i].Add(-1) == 0 {
		u.gone[i].Store(u.now())
	}
}

// Open returns how many connections of the codec at index i are open.
func (u *Usage) Open(i int) int64 { return u.open[i].Load() }

// Codecs returns the codecs to encode a message published in the codec at
// index in: the carrier, in, and every codec in use.
func (u *Usage) Codecs(in int) Mask {
	m := Mask(1)<<Carrier | Mask(1)<<in
	var now int64 // read once, if a codec without connections needs it
	for i := range NumCodecs {
		if u.open[i].Load() > 0 {
			m |= Mask(1) << i
			continue
		}
		if gone := u.gone[i].Load(); gone != 0 {
			if now == 0 {
				now = u.now()
			}
			if now-gone < Linger {
				m |= Mask(1) << i
			}
		}
	}
	return m
}
