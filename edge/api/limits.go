package api

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// limiters bound each app's API requests: a token bucket per app, made
// at New (apps are configured), read-only after.
type limiters struct {
	rps    int
	burst  int
	now    func() time.Time // Options.Now: the buckets refill on it
	perApp map[string]*rate.Limiter
}

func newLimiters(appKeys []string, rps, burst int, now func() time.Time) *limiters {
	l := &limiters{rps: rps, burst: burst, now: now}
	if rps <= 0 {
		return l
	}
	if l.burst <= 0 {
		l.burst = 2 * rps
	}
	l.perApp = make(map[string]*rate.Limiter, len(appKeys))
	for _, k := range appKeys {
		l.perApp[k] = rate.NewLimiter(rate.Limit(rps), l.burst)
	}
	return l
}

// allow takes a token of the app's bucket, or answers the 429 refusal.
func (l *limiters) allow(appKey string) *Error {
	lim := l.perApp[appKey]
	if lim == nil {
		return nil
	}
	at := l.now()
	r := lim.ReserveN(at, 1)
	d := r.DelayFrom(at)
	if d == 0 {
		return nil
	}
	r.CancelAt(at) // a refused request takes no token
	return &Error{Status: http.StatusTooManyRequests, Code: CodeTooManyRequests,
		Reason: "more than " + itoa(int64(l.rps)) + " API requests per second for this app (bursts of " + itoa(int64(l.burst)) +
			"); slow down or raise limits.api_requests_per_second",
		retryAfter: int(math.Ceil(d.Seconds()))}
}

// requestKey labels one count of requests: apps and methods are bounded
// sets (an unknown method counts as "unknown", a request without a valid
// key under app ""), and so are the codes.
type requestKey struct{ app, method, code string }

// requestCounts counts the API's answers.
type requestCounts struct {
	m sync.Map // requestKey -> *atomic.Uint64
}

func (rc *requestCounts) add(app, method, code string) {
	k := requestKey{app, method, code}
	v, ok := rc.m.Load(k)
	if !ok {
		v, _ = rc.m.LoadOrStore(k, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(1)
}

// RequestCount is how many requests got one answer: by app (its appkey;
// "" when the API key was missing or wrong), method ("unknown" for a
// method that does not exist) and code ("ok", or the error code).
type RequestCount struct {
	App, Method, Code string
	Count             uint64
}

// Stats returns the request counts since New, sorted.
func (h *Handler) Stats() []RequestCount {
	var out []RequestCount
	h.counts.m.Range(func(k, v any) bool {
		key := k.(requestKey)
		out = append(out, RequestCount{App: key.app, Method: key.method, Code: key.code, Count: v.(*atomic.Uint64).Load()})
		return true
	})
	slices.SortFunc(out, func(a, b RequestCount) int {
		return cmp.Or(cmp.Compare(a.App, b.App), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Code, b.Code))
	})
	return out
}

// setRetryAfter sets Retry-After on a 429.
func setRetryAfter(w http.ResponseWriter, e *Error) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
}
