package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The kinds of events.
const (
	// KindChannelOccupied: a channel of the app got its first subscriber
	// on this edge. Data: ChannelData.
	KindChannelOccupied = "channel_occupied"
	// KindChannelVacated: the last subscriber of a channel on this edge
	// went. Data: ChannelData.
	KindChannelVacated = "channel_vacated"
	// KindDisconnect: a connection ended. Data: DisconnectData.
	KindDisconnect = "disconnect"
	// KindPresenceJoin and KindPresenceLeave: a user joined or left a
	// channel's presence. Data: PresenceData.
	KindPresenceJoin  = "presence_join"
	KindPresenceLeave = "presence_leave"
)

// Kinds are every kind of event, the default of EventsConfig.Kinds.
var Kinds = []string{KindChannelOccupied, KindChannelVacated, KindDisconnect, KindPresenceJoin, KindPresenceLeave}

// Event is one event as a backend receives it, in a Batch.
type Event struct {
	// ID is unique per event (Edge, then a sequence number):
	// delivery is at least once, so a backend that must not act twice
	// remembers the ids it has seen.
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Time is when it happened, in milliseconds since the Unix epoch.
	Time   int64  `json:"time"`
	Appkey string `json:"appkey"`
	// Edge names the edge that posted it (the prefix of its connection
	// ids): in a cluster each edge posts its own channel_occupied and
	// channel_vacated, which a backend counts per edge.
	Edge string          `json:"edge"`
	Data json.RawMessage `json:"data"`
}

// Batch is the body of an events post: events in the order they happened.
type Batch struct {
	Events []Event `json:"events"`
}

// ChannelData is the data of channel_occupied and channel_vacated.
type ChannelData struct {
	Channel string `json:"channel"`
}

// DisconnectData is the data of disconnect: the connection's id and user,
// and the WebSocket close code and reason it ended with (1006 and no
// reason: it vanished without a close frame).
type DisconnectData struct {
	Connection string `json:"connection"`
	User       string `json:"user,omitempty"`
	Code       int    `json:"code"`
	Reason     string `json:"reason,omitempty"`
}

// PresenceData is the data of presence_join and presence_leave.
type PresenceData struct {
	Channel    string          `json:"channel"`
	Connection string          `json:"connection"`
	User       string          `json:"user,omitempty"`
	Info       json.RawMessage `json:"info,omitempty"`
}

// Errors of Post. A caller need not act on them: each is counted.
var (
	ErrUnknownKind = errors.New("hook: unknown event kind")
	ErrQueueFull   = errors.New("hook: events queue full; event dropped")
	ErrClosed      = errors.New("hook: events sender closed; event dropped")
)

// eventSeq numbers the events of every app of the process, so that an
// id (edge, then number) is unique whichever app it is for.
var eventSeq atomic.Uint64

// Events posts one app's events to its backend; see the package doc. Its
// goroutine runs from New to Close.
type Events struct {
	h      *Hooks
	cfg    EventsConfig
	kinds  map[string]bool
	wake   chan struct{} // capacity 1: Post tells the loop there is work
	quit   chan struct{} // closed by Close: deliver what is queued, then end
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has ended

	mu      sync.Mutex // guards queue and ended
	queue   []Event    // waiting to be posted, oldest first; at most cfg.Queue
	ended   bool       // the loop has ended: Post drops
	closing sync.Once

	// Counters, written by Post and the loop.
	queued, delivered, dropped, retries, batches atomic.Uint64
}

// EventStats are an events sender's counts since the edge started.
type EventStats struct {
	// Queued events were accepted by Post; Delivered ones were answered
	// 2xx; Dropped ones were refused by a full queue or abandoned at
	// Close's deadline; Retries counts failed attempts (each retried);
	// Pending is the queue's length now.
	Queued, Delivered, Dropped, Retries, Batches uint64
	Pending                                      int
}

func newEvents(h *Hooks, cfg EventsConfig) *Events {
	cfg = cfg.withDefaults()
	e := &Events{
		h: h, cfg: cfg,
		kinds: make(map[string]bool, len(cfg.Kinds)),
		wake:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	for _, k := range cfg.Kinds {
		e.kinds[k] = true
	}
	var ctx context.Context
	ctx, e.cancel = context.WithCancel(context.Background())
	go e.loop(ctx)
	return e
}

// Post queues an event of kind with data (marshalled to JSON now) without
// blocking. A kind the app's configuration does not list is skipped
// (nil). A full queue drops the event (ErrQueueFull, counted).
func (e *Events) Post(kind string, data any) error {
	if e == nil {
		return nil
	}
	if !slices.Contains(Kinds, kind) {
		return fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	if !e.kinds[kind] {
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("hook: event %s: %w", kind, err)
	}
	ev := Event{ID: e.h.edge + "-" + strconv.FormatUint(eventSeq.Add(1), 10), Kind: kind,
		Time: time.Now().UnixMilli(), Appkey: e.h.appkey, Edge: e.h.edge, Data: raw}
	e.mu.Lock()
	switch {
	case e.ended:
		e.mu.Unlock()
		e.dropped.Add(1)
		return ErrClosed
	case len(e.queue) >= e.cfg.Queue:
		e.mu.Unlock()
		e.dropped.Add(1)
		return ErrQueueFull
	}
	e.queue = append(e.queue, ev)
	n := len(e.queue)
	e.mu.Unlock()
	e.queued.Add(1)
	if n == 1 || n >= e.cfg.Batch {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// Stats returns the sender's counts.
func (e *Events) Stats() EventStats {
	e.mu.Lock()
	n := len(e.queue)
	e.mu.Unlock()
	return EventStats{Queued: e.queued.Load(), Delivered: e.delivered.Load(), Dropped: e.dropped.Load(),
		Retries: e.retries.Load(), Batches: e.batches.Load(), Pending: n}
}

// close delivers what is queued until ctx ends, then abandons the rest
// (counted as dropped) and returns once the loop has ended.
func (e *Events) close(ctx context.Context) {
	e.closing.Do(func() { close(e.quit) })
	select {
	case <-e.done:
	case <-ctx.Done():
		e.cancel()
		<-e.done
	}
	e.cancel()
}

// loop posts batches until Close: it takes up to Batch events, waiting
// Flush for more to share the post, and retries the batch until it is
// delivered.
func (e *Events) loop(ctx context.Context) {
	defer close(e.done)
	defer e.end()
	for {
		batch, ok := e.next(ctx)
		if !ok {
			return
		}
		if !e.deliver(ctx, batch) {
			e.dropped.Add(uint64(len(batch)))
			return
		}
	}
}

// end marks the loop ended and counts what it leaves queued as dropped.
func (e *Events) end() {
	e.mu.Lock()
	e.ended = true
	n := len(e.queue)
	e.queue = nil
	e.mu.Unlock()
	e.dropped.Add(uint64(n))
}

// next waits for events and returns the next batch; false once closing
// with nothing queued, or abandoned.
func (e *Events) next(ctx context.Context) ([]Event, bool) {
	var flush <-chan time.Time
	for {
		e.mu.Lock()
		n := len(e.queue)
		e.mu.Unlock()
		quitting := isClosed(e.quit)
		switch {
		case n == 0 && quitting:
			return nil, false
		case n > 0 && (n >= e.cfg.Batch || quitting || e.cfg.Flush < 0):
			return e.take(), true
		case n > 0 && flush == nil:
			t := time.NewTimer(e.cfg.Flush)
			defer t.Stop()
			flush = t.C
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-e.quit:
		case <-e.wake:
		case <-flush:
			return e.take(), true
		}
	}
}

// take removes and returns the oldest Batch events.
func (e *Events) take() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := min(len(e.queue), e.cfg.Batch)
	batch := slices.Clone(e.queue[:n])
	e.queue = slices.Delete(e.queue, 0, n)
	return batch
}

// deliver posts batch until the backend answers 2xx, with backoff between
// attempts; false when ctx ended first.
func (e *Events) deliver(ctx context.Context, batch []Event) bool {
	body, err := json.Marshal(&Batch{Events: batch})
	if err != nil {
		// Every field is a string, a number or JSON marshalled by Post.
		e.h.log.Error("hook: events batch cannot be encoded", "appkey", e.h.appkey, "err", err)
		return true
	}
	wait := e.cfg.MinBackoff
	for attempt := 1; ; attempt++ {
		err := e.attempt(ctx, body)
		if err == nil {
			e.delivered.Add(uint64(len(batch)))
			e.batches.Add(1)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		e.retries.Add(1)
		e.h.log.Warn("hook: events post failed; retrying", "appkey", e.h.appkey, "events", len(batch),
			"attempt", attempt, "retry_in", wait, "err", err)
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		wait = min(2*wait, e.cfg.MaxBackoff)
	}
}

// attempt posts body once, within the hook timeout.
func (e *Events) attempt(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, e.h.cfg.timeout())
	defer cancel()
	status, _, err := e.h.post(ctx, e.cfg.URL, "events", body)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return fmt.Errorf("answered HTTP %d", status)
	}
	return nil
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
