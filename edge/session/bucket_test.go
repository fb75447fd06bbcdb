package session

import (
	"context"
	"testing"
	"time"
)

// TestBucket checks the token bucket on its own clock: a full bucket
// admits burst requests at once, then one per interval; a quiet spell
// refills it, never past burst.
func TestBucket(t *testing.T) {
	t.Parallel()
	b := newBucket(10, 4) // a token every 100 ms, 4 at most
	admitted := func(at time.Duration, n int) int {
		k := 0
		for range n {
			if b.allowAt(at) {
				k++
			}
		}
		return k
	}
	tests := []struct {
		name string
		at   time.Duration
		n    int
		want int
	}{
		{name: "a full bucket admits the burst at once", at: 0, n: 10, want: 4},
		{name: "then nothing at the same instant", at: 0, n: 3, want: 0},
		{name: "not before a token is earned", at: 99 * time.Millisecond, n: 3, want: 0},
		{name: "one token per interval", at: 100 * time.Millisecond, n: 3, want: 1},
		{name: "two more intervals, two more", at: 300 * time.Millisecond, n: 3, want: 2},
		{name: "a quiet spell refills to burst, no more", at: 10 * time.Second, n: 10, want: 4},
	}
	for _, tt := range tests { // in order: each step starts where the last left the bucket
		if got := admitted(tt.at, tt.n); got != tt.want {
			t.Fatalf("%s: %d of %d admitted at %v, want %d", tt.name, got, tt.n, tt.at, tt.want)
		}
	}
}

// TestBucketReserve: a request without id takes a token that may not be
// earned yet; the wait is until it is, and consecutive reservations queue
// up one interval apart.
func TestBucketReserve(t *testing.T) {
	t.Parallel()
	b := newBucket(10, 2)
	for i, want := range []time.Duration{0, 0, 100 * time.Millisecond, 200 * time.Millisecond} {
		got := max(b.reserveAt(0), 0)
		if got != want {
			t.Fatalf("reservation %d waits %v, want %v", i, got, want)
		}
	}
	if b.allowAt(250 * time.Millisecond) {
		t.Fatal("admitted at 250 ms though reservations hold the tokens up to 300 ms")
	}
	if !b.allowAt(300 * time.Millisecond) {
		t.Fatal("refused at 300 ms, when a token is earned")
	}
}

// TestBucketWait: wait returns once its token is earned, and gives up
// when its context ends.
func TestBucketWait(t *testing.T) {
	t.Parallel()
	soon := newBucket(1000, 1)
	soon.allow()
	start := time.Now()
	if err := soon.wait(context.Background()); err != nil || time.Since(start) < 500*time.Microsecond {
		t.Fatalf("wait for a token 1 ms away: %v after %v, want nil after about 1 ms", err, time.Since(start))
	}
	b := newBucket(1, 1)
	b.full = 1 << 62 // empty for good
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.wait(ctx); err == nil {
		t.Fatal("wait returned without a token and with its context ended")
	}
}
