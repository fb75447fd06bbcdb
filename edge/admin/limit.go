package admin

import (
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxPeers bounds the source addresses whose failed logins are
// remembered, so that a flood of addresses cannot grow the map.
const maxPeers = 1 << 16

// failures rate limits failed logins per source address, as the edge
// limits failed RTM authentications (limits.auth_failures_per_minute): a
// token bucket per address that only failures take from, so that an
// operator who types the key right is never slowed and a guesser gets a
// few tries a minute.
type failures struct {
	every time.Duration // one more try per every
	burst int
	now   func() time.Time

	mu    sync.Mutex // guards peers
	peers map[string]*rate.Limiter
}

func newFailures(perMinute int, now func() time.Time) *failures {
	return &failures{every: time.Minute / time.Duration(perMinute), burst: perMinute, now: now,
		peers: make(map[string]*rate.Limiter)}
}

// peerOf is the address part of a request's remote "host:port". Behind
// a reverse proxy every operator has the proxy's.
func peerOf(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}

// wait returns 0 when peer may try to log in now, else how long until it
// may.
func (f *failures) wait(peer string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.peers[peer]
	if b == nil {
		return 0
	}
	tokens := b.TokensAt(f.now())
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(f.every))
}

// failed takes a try from peer's bucket.
func (f *failures) failed(peer string) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.peers[peer]
	if b == nil {
		if len(f.peers) >= maxPeers {
			f.evictLocked(now)
		}
		b = rate.NewLimiter(rate.Every(f.every), f.burst)
		f.peers[peer] = b
	}
	b.AllowN(now, 1)
}

// evictLocked makes room: it forgets the addresses whose bucket has
// filled up again (as if never seen), or, if none has, one at random.
func (f *failures) evictLocked(now time.Time) {
	for k, b := range f.peers {
		if b.TokensAt(now) >= float64(f.burst) {
			delete(f.peers, k)
		}
	}
	for k := range f.peers {
		if len(f.peers) < maxPeers {
			return
		}
		delete(f.peers, k)
	}
}
