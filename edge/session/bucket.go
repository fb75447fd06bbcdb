package session

import (
	"context"
	"time"
)

// bucket is the token bucket of a connection's request rate limit: it
// holds up to burst tokens, refills at rate tokens a second, and every
// request takes one. A client may so send burst requests at once (a page
// that subscribes to its channels as it loads, a reconnect resubscribing
// everything), then rate a second for as long as it likes.
//
// It is kept as the time at which the bucket would be full again (the
// generic cell rate algorithm): one integer, no floating point, no lock.
// Only the connection's reader goroutine uses it.
type bucket struct {
	interval time.Duration // time to earn one token: 1s / rate
	depth    time.Duration // (burst-1) * interval: how far full may lie ahead of now
	start    time.Time     // origin of the monotonic clock below
	full     time.Duration // since start: when the bucket is full again
	timer    *time.Timer   // reused by wait, made on its first use
}

// reserveAt takes a token at now, earned or not, and returns how long
// until it is earned (0 or less: it was there).
func (b *bucket) reserveAt(now time.Duration) time.Duration {
	full := max(b.full, now)
	b.full = full + b.interval
	return full - now - b.depth
}

// newBucket returns a full bucket of burst tokens refilling at rate a
// second; both must be positive.
func newBucket(rate, burst int) *bucket {
	interval := time.Second / time.Duration(rate)
	return &bucket{interval: interval, depth: time.Duration(burst-1) * interval, start: time.Now()}
}

// now is the time on the bucket's monotonic clock.
func (b *bucket) now() time.Duration { return time.Since(b.start) }

// allow takes a token if there is one, and reports whether it did.
func (b *bucket) allow() bool { return b.allowAt(b.now()) }

// allowAt is allow at a given time of the bucket's clock.
func (b *bucket) allowAt(now time.Duration) bool {
	full := max(b.full, now)
	if full-now > b.depth {
		return false
	}
	b.full = full + b.interval
	return true
}

// wait takes a token, waiting for it to be earned if need be; it fails
// only when ctx ends first (the token is then spent all the same: the
// connection is closing).
func (b *bucket) wait(ctx context.Context) error {
	d := b.reserveAt(b.now())
	if d <= 0 {
		return nil
	}
	if b.timer == nil {
		b.timer = time.NewTimer(d)
	} else {
		b.timer.Reset(d)
	}
	select {
	case <-b.timer.C:
		return nil
	case <-ctx.Done():
		b.timer.Stop()
		return ctx.Err()
	}
}
