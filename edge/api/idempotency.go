package api

import (
	"container/list"
	"context"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// MaxIdempotencyKeyBytes bounds an idempotency_key.
const MaxIdempotencyKeyBytes = 128

// window remembers, for a while and up to a count, the answers of
// requests that carried an idempotency key, so that a retry stores
// nothing and gets the first answer. Only successes are remembered: a
// refused request stored nothing (or, for unavailable, at most once), so
// its retry runs anew. A retry arriving while the first is still running
// waits for it.
type window struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex               // guards entries and order
	entries map[string]*list.Element // of *entry, by scoped key
	order   *list.List               // entries, oldest first
}

// entry is one key's request; answer and ok are written once, by the
// request that created it, before done is closed.
type entry struct {
	key    string
	fp     [sha256.Size]byte // what the request asked, to refuse a key reused for another
	at     time.Time
	done   chan struct{}
	answer any
	ok     bool
}

func newWindow(ttl time.Duration, max int, now func() time.Time) *window {
	return &window{ttl: ttl, max: max, now: now, entries: make(map[string]*list.Element), order: list.New()}
}

// do runs fn once per key within the window and returns its answer; a
// request with the same key but another fingerprint is refused.
func (w *window) do(ctx context.Context, key string, fp [sha256.Size]byte, fn func() (any, error)) (any, error) {
	for {
		e, first, err := w.begin(key, fp)
		if err != nil {
			return nil, err
		}
		if first {
			answer, err := fn()
			w.finish(e, answer, err == nil)
			return answer, err
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, &Error{Status: http.StatusServiceUnavailable, Code: string(rtm.CodeUnavailable),
				Reason: "the first request with this idempotency_key is still running"}
		}
		if e.ok {
			return e.answer, nil
		}
		// The first one failed and was forgotten: this one tries anew.
	}
}

// begin returns the key's entry, and whether the caller created it and
// must run the request.
func (w *window) begin(key string, fp [sha256.Size]byte) (*entry, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	for f := w.order.Front(); f != nil; f = w.order.Front() {
		old := f.Value.(*entry)
		if now.Sub(old.at) < w.ttl && w.order.Len() < w.max {
			break
		}
		w.remove(f)
	}
	if el, ok := w.entries[key]; ok {
		e := el.Value.(*entry)
		if e.fp != fp {
			return nil, false, &Error{Status: http.StatusUnprocessableEntity, Code: CodeIdempotencyMismatch,
				Reason: "this idempotency_key was used for a different request within the window; use a new key"}
		}
		return e, false, nil
	}
	e := &entry{key: key, fp: fp, at: now, done: make(chan struct{})}
	w.entries[key] = w.order.PushBack(e)
	return e, true, nil
}

// finish records the answer and wakes the retries waiting; a failure is
// forgotten.
func (w *window) finish(e *entry, answer any, ok bool) {
	w.mu.Lock()
	e.answer, e.ok = answer, ok
	if !ok {
		if el, here := w.entries[e.key]; here && el.Value == e {
			w.remove(el)
		}
	}
	w.mu.Unlock()
	close(e.done)
}

// remove forgets an entry; w.mu is held. A retry already waiting on it
// still gets its answer.
func (w *window) remove(el *list.Element) {
	e := w.order.Remove(el).(*entry)
	if cur, ok := w.entries[e.key]; ok && cur == el {
		delete(w.entries, e.key)
	}
}

// fingerprint digests what a request asks, in canonical form.
func fingerprint(parts ...[]byte) [sha256.Size]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(itoa(int64(len(p)))))
		h.Write([]byte{':'})
		h.Write(p)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}
