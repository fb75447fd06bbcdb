package admin

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// session is one login: the app it is for and the API key that opened
// it, which the page's API calls are made with.
type session struct {
	appKey  string
	apiKey  string
	created time.Time
	seen    time.Time
}

// sessions are the logins in force, in memory (a restart logs everyone
// out). They are found by the SHA-256 of their token: the token itself is
// never stored, and the lookup's timing depends on a digest the caller
// cannot choose, never on how much of a guessed token matches.
type sessions struct {
	idle   time.Duration // a session unused this long ends
	maxAge time.Duration // a session ends this long after its login
	max    int           // at most this many at once; the oldest goes first
	now    func() time.Time

	mu   sync.Mutex // guards byID
	byID map[[sha256.Size]byte]*session
}

func newSessions(idle, maxAge time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{idle: idle, maxAge: maxAge, max: max, now: now, byID: make(map[[sha256.Size]byte]*session)}
}

// tokenBytes is a token's randomness: 256 bits.
const tokenBytes = 32

// create opens a session and returns its token, the cookie's value.
func (s *sessions) create(appKey, apiKey string) string {
	b := make([]byte, tokenBytes)
	rand.Read(b) // never fails (crypto/rand)
	token := base64.RawURLEncoding.EncodeToString(b)
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(now)
	for len(s.byID) >= s.max {
		s.evictOldestLocked()
	}
	s.byID[sha256.Sum256([]byte(token))] = &session{appKey: appKey, apiKey: apiKey, created: now, seen: now}
	return token
}

// get returns the session of token, in force, and marks it used.
func (s *sessions) get(token string) (session, bool) {
	if token == "" {
		return session{}, false
	}
	id := sha256.Sum256([]byte(token))
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byID[id]
	if !ok {
		return session{}, false
	}
	if s.expired(ss, now) {
		delete(s.byID, id)
		return session{}, false
	}
	ss.seen = now
	return *ss, true
}

// end ends the session of token, if any.
func (s *sessions) end(token string) {
	id := sha256.Sum256([]byte(token))
	s.mu.Lock()
	delete(s.byID, id)
	s.mu.Unlock()
}

// count returns how many sessions are held, expired ones not yet swept
// included.
func (s *sessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

func (s *sessions) expired(ss *session, now time.Time) bool {
	return now.Sub(ss.seen) >= s.idle || now.Sub(ss.created) >= s.maxAge
}

// sweepLocked forgets the sessions that expired. Logins are rare, so
// sweeping at each is cheap and needs no goroutine.
func (s *sessions) sweepLocked(now time.Time) {
	for id, ss := range s.byID {
		if s.expired(ss, now) {
			delete(s.byID, id)
		}
	}
}

// evictOldestLocked ends the session opened first.
func (s *sessions) evictOldestLocked() {
	var oldest [sha256.Size]byte
	var at time.Time
	for id, ss := range s.byID {
		if at.IsZero() || ss.created.Before(at) {
			oldest, at = id, ss.created
		}
	}
	delete(s.byID, oldest)
}
