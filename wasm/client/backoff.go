package client

import (
	"math/rand/v2"
	"time"
)

// backoff computes reconnection delays: exponential growth from min to max
// with full jitter (a uniform draw in [0, cap]), so that many clients cut
// off at once by an edge restart do not come back in lockstep.
type backoff struct {
	min, max time.Duration
	attempt  int
}

// next returns the delay before the next attempt and counts the attempt.
func (b *backoff) next() time.Duration {
	ceiling := b.ceiling()
	b.attempt++
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

// ceiling is min*2^attempt, capped at max.
func (b *backoff) ceiling() time.Duration {
	c := b.min
	for i := 0; i < b.attempt && c < b.max; i++ {
		c *= 2
	}
	return min(c, b.max)
}

// reset starts over from min, after a connection proved healthy.
func (b *backoff) reset() { b.attempt = 0 }
