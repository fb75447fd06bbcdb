package session

import (
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// BenchmarkAdmit measures the request rate limit every request passes
// through (handleFrame's admit): a request the bucket admits, and one it
// refuses (a flood, whose requests with id get too_many_requests).
func BenchmarkAdmit(b *testing.B) {
	id := rtm.IntID(7)
	b.Run("admitted", func(b *testing.B) {
		c := &Session{requestState: requestState{limiter: newBucket(1e9, 1<<30)}}
		b.ReportAllocs()
		for b.Loop() {
			if !c.admit(id) {
				b.Fatal("refused under a limit it cannot reach")
			}
		}
	})
	b.Run("refused", func(b *testing.B) {
		c := &Session{requestState: requestState{limiter: newBucket(1, 1)}}
		c.limiter.full = 1 << 62 // empty for good
		b.ReportAllocs()
		for b.Loop() {
			if c.admit(id) {
				b.Fatal("admitted past an empty bucket")
			}
		}
	})
}
