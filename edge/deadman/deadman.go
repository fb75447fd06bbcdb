// Package deadman keeps an edge's dead man's switches: rtm/publish or
// rtm/write with ttl and ttl_message arms one on the channel, which
// publishes ttl_message there if nothing else is published within ttl.
package deadman

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// When a switch fires, the edge publishes ttl_message
// there as a compare-and-set at the position of the publish that armed
// it, so if anything else was published on the channel meanwhile (by any
// connection, through any path) the append is refused and nothing is
// published: "nothing else within ttl" is decided by the store, under
// the channel's writer lock, and costs the publish path nothing. A later
// publish with ttl on the channel replaces the switch.
//
// Each switch is a runtime timer; its callback runs on a goroutine of its
// own, counted in wg, so close stops the timers that have not fired and
// waits for those that have.
//
// The compare-and-set is the channel log's (chanlog.Log.Fire): with a
// journal the log's own (PublishExpect at the arming publish's offset),
// so "nothing else within ttl" holds across every edge of a cluster: a
// publish on any edge, a later switch armed on any edge, or a purge
// makes its message refused by the log. Its callback waits for the log,
// until close cancels it.
//
// The log keeps the switch with its arming message, and every edge's
// feed announces it (Journal.OnSwitch): each edge that did not arm it
// holds a standby, due switchTakeover after the switch, that fires only
// if nobody has (the channel in its store has moved on otherwise, and
// the log's compare-and-set refuses a second message anyway). So a
// switch outlives the edge that armed it: another edge fires it after a
// crash or a deploy, and a restarted edge those armed before it stopped
// (the journal's replay brings those of its window, its recoverSwitches
// the older ones).

// Switches are a server's armed switches, one per channel at most (so
// bounded by the apps' max_channels).
type Switches struct {
	mu     sync.Mutex
	armed  map[string]*armedSwitch // by store key; mu
	closed bool                    // mu: close has run; arm does nothing
	wg     sync.WaitGroup          // callbacks that will run or are running

	store *store.Store // immutable
	log   chanlog.Log  // immutable
	// ctx ends when close begins: a callback waiting for the log stops.
	ctx    context.Context
	cancel context.CancelFunc
	// retention is the log's (0: none, or no log), which bounds the ttl
	// (Allowed): a switch fires by a compare-and-set at its arming
	// publish, which the log must still hold then. Immutable.
	retention time.Duration
	// fired and skipped count this edge's switches that published their
	// message and those that found something else published first;
	// takenOver and passed count the standbys (and retried switches) that
	// published theirs, nobody having done it, and those that did not
	// need to; retried the publishes of a switch the log did not take,
	// armed again.
	fired, skipped, takenOver, passed, retried atomic.Uint64
}

// Stats count what the switches did.
type Stats struct {
	// Fired and Skipped count this edge's switches that published their
	// message and those that found something else published first.
	Fired, Skipped uint64
	// TakenOver and Passed count the standbys (and retried switches)
	// that published theirs, nobody having done it, and those that did
	// not need to; Retried the publishes the log did not take, armed
	// again.
	TakenOver, Passed, Retried uint64
}

// Stats returns the switches' counts so far.
func (t *Switches) Stats() Stats {
	return Stats{Fired: t.fired.Load(), Skipped: t.skipped.Load(), TakenOver: t.takenOver.Load(),
		Passed: t.passed.Load(), Retried: t.retried.Load()}
}

// switchTakeover is how long after a switch comes due a standby fires
// it: long enough for the arming edge's message to reach the others'
// feeds, so that a live edge's switch costs them no publish.
const switchTakeover = 2 * time.Second

// armedSwitch is one armed switch.
type armedSwitch struct {
	timer   *time.Timer
	at      rtm.Position // the publish that armed it
	payload []byte       // ttl_message, encoded like a publish's
	standby bool         // announced by the log (armed elsewhere, or before a restart), or retried
	retries int          // attempts the log did not take
}

// MaxTTL bounds ttl: a dead man's switch armed for longer than a day is a
// mistake, and each armed one holds a timer and its message.
const MaxTTL = 24 * 60 * 60

// switchMargin is how much longer than a switch's ttl the log must keep
// its arming publish: the standby's switchTakeover, and the feed's lag.
const switchMargin = 10 * time.Second

func New(s *store.Store, l chanlog.Log) *Switches {
	t := &Switches{armed: make(map[string]*armedSwitch), store: s, log: l, retention: l.Windows().Retention}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t
}

// Allowed refuses a ttl outside 1 to MaxTTL, or one the log cannot
// honour (switchMargin short of its retention), saying why: a switch
// that could never fire must not be acknowledged as armed.
func (t *Switches) Allowed(ttl int64) error {
	if ttl < 1 || ttl > MaxTTL {
		return rtm.Errorf(rtm.CodeInvalidFormat, "ttl must be 1 to %d seconds", MaxTTL)
	}
	if t.retention <= 0 {
		return nil
	}
	if most := max(int64((t.retention-switchMargin)/time.Second), 1); ttl > most {
		return rtm.Errorf(rtm.CodeInvalidFormat,
			"ttl must be at most %d seconds on this edge: its log keeps a message %s (the longest of its apps' rules), and a switch fires only while the publish that armed it is there",
			most, t.retention)
	}
	return nil
}

// Arm arms a switch on key, replacing the one armed there before.
func (t *Switches) Arm(key string, at rtm.Position, seconds int64, payload []byte) {
	t.set(key, &armedSwitch{at: at, payload: payload}, time.Duration(seconds)*time.Second)
}

// Standby arms the standby of a switch the log announced: the message at
// at of key, stored at stored, armed it for ttl seconds. It is the
// channel log's OnSwitch.
//
// A message the feed brings as it is published is timed from now, not
// from stored: stored is the stream leader's clock, and an edge whose
// clock ran ahead of it would fire early. A replayed one (stored before
// a restart) is timed from stored, or it would come late by the time it
// waited: it fires switchTakeover after it comes due, and not sooner
// than switchTakeover from now, by when the replay has brought what
// followed it (a later switch on the channel replaces it, anything else
// makes it pass).
func (t *Switches) Standby(key string, at rtm.Position, stored time.Time, ttl int64, payload []byte, replayed bool) {
	sw := &armedSwitch{at: at, payload: payload, standby: true}
	d := time.Duration(ttl) * time.Second
	if now := time.Now(); !replayed && now.Sub(stored) < d {
		stored = now
	}
	t.set(key, sw, max(time.Until(stored.Add(d+switchTakeover)), switchTakeover))
}

// retry arms sw's message again, as a standby, after the log failed to
// answer its publish: due in switchTakeover, doubling with each failure
// up to maxSwitchRetry. It returns false if it did not (the edge is
// closing, or a later switch is armed).
func (t *Switches) retry(key string, sw *armedSwitch) bool {
	wait := min(switchTakeover<<min(sw.retries, 8), maxSwitchRetry)
	again := &armedSwitch{at: sw.at, payload: sw.payload, standby: true, retries: sw.retries + 1}
	if !t.set(key, again, wait) {
		return false
	}
	t.retried.Add(1)
	return true
}

// maxSwitchRetry bounds the wait between the attempts of a switch whose
// message the log does not take (NATS away): the message is still due,
// however late, if nothing else was published.
const maxSwitchRetry = time.Minute

// set arms sw on key to fire after d, unless the switch armed there is
// of the same message or a later one (the arming edge learns of its own
// switch from its feed too, and a publish's answer may come after the
// feed applied a later message's) or the edge is closing: then it
// returns false.
func (t *Switches) set(key string, sw *armedSwitch, d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	if old := t.armed[key]; old != nil && old.outranks(sw) {
		return false
	}
	t.stopLocked(key)
	t.wg.Add(1)
	sw.timer = time.AfterFunc(d, func() {
		defer t.wg.Done()
		t.fire(key, sw)
	})
	t.armed[key] = sw
	return true
}

// outranks reports whether sw, armed on a channel, stays armed when o
// comes: it is of a later message, or of the same one and not a standby
// giving way to the edge's own switch.
func (sw *armedSwitch) outranks(o *armedSwitch) bool {
	if sw.at.Epoch != o.at.Epoch {
		return false
	}
	return sw.at.Offset > o.at.Offset || sw.at.Offset == o.at.Offset && (!sw.standby || o.standby)
}

// Disarm stops the switch of key, if any.
func (t *Switches) Disarm(key string) {
	t.mu.Lock()
	t.stopLocked(key)
	t.mu.Unlock()
}

// stopLocked stops and forgets the switch of key. mu.
func (t *Switches) stopLocked(key string) {
	if old := t.armed[key]; old != nil {
		delete(t.armed, key)
		if old.timer.Stop() {
			t.wg.Done() // its callback will not run
		}
	}
}

// fire publishes sw's message unless something else came first.
func (t *Switches) fire(key string, sw *armedSwitch) {
	t.mu.Lock()
	if t.armed[key] != sw || t.closed {
		// Replaced (or closing) after the timer fired, before this ran:
		// its replacement owns the channel now.
		t.mu.Unlock()
		return
	}
	delete(t.armed, key)
	t.mu.Unlock()
	if sw.standby && t.store.MovedOn(key, sw.at.Offset) {
		t.passed.Add(1) // fired, or something else came
		return
	}
	err := t.log.Fire(t.ctx, key, sw.at, sw.payload)
	switch {
	case err == nil && sw.standby:
		t.takenOver.Add(1)
	case err == nil:
		t.fired.Add(1)
	case !errors.Is(err, store.ErrMismatch) && !errors.Is(err, store.ErrTooLarge) && t.retry(key, sw):
		// The log did not answer (a leader change, NATS away): again
		// later, unless the edge closes or a later switch came
		// meanwhile. (Too large for NATS stays so.)
	case sw.standby:
		t.passed.Add(1)
	default:
		t.skipped.Add(1) // another message came, or the store is closing
	}
}

// Close stops every switch and waits for the callbacks already running.
// It is idempotent.
func (t *Switches) Close() {
	t.mu.Lock()
	t.closed = true
	t.cancel()
	for key := range t.armed {
		t.stopLocked(key)
	}
	t.mu.Unlock()
	t.wg.Wait()
}
