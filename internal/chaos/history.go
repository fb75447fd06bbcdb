// Package chaos is the reference model of a channel log against which a
// randomized test of a Sluice cluster (e2e/chaos_test.go) checks every
// answer and every delivery it saw.
//
// The test records a History: every publish, write, compare-and-set
// write, delete and purge it sent (with the interval [sent, replied] in
// which it took effect, and its outcome: acknowledged, refused, or
// unknown, a "maybe"), every read, and every subscription with each data
// PDU it delivered. Check then replays the history against the model:
//
//   - the log of a channel is one sequence ordered by offset; every
//     acknowledged message has its offset, and a "maybe" message gets one
//     once it is seen anywhere (the last message of a data PDU, a read);
//   - an operation takes effect at some instant of its interval, so a
//     message acknowledged before a request was sent is definitely in the
//     log for it (unless a purge may have dropped it), and one sent after
//     the reply came is definitely not;
//   - a subscription delivers, from its start, every message of the log
//     once and in order up to where it ended;
//   - the start of a subscription, a read's answer, a compare-and-set's
//     verdict and an expired_position are each checked against what the
//     log may have held within the request's interval, and no more.
//
// Check reports each Violation with the records involved; the known bugs
// of issue 29 are marked as such (Violation.Known).
package chaos

import (
	"sync"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Outcome is what a request's reply said about its effect.
type Outcome uint8

const (
	// Pending: no reply yet (the run ended first: treated as Maybe).
	Pending Outcome = iota
	// Acked: done, at the position replied.
	Acked
	// Maybe: an error that leaves the effect unknown (unavailable, a
	// timeout, a lost connection): it may happen, once, or not at all.
	Maybe
	// Refused: a definite error; nothing was done.
	Refused
)

func (o Outcome) String() string {
	return [...]string{"pending", "ok", "maybe", "refused"}[o]
}

// WriteKind says which request stored a message.
type WriteKind uint8

const (
	Publish WriteKind = iota // rtm/publish
	Write                    // rtm/write
	CAS                      // rtm/write with position
	Delete                   // rtm/delete: a null message
)

func (k WriteKind) String() string { return [...]string{"publish", "write", "cas", "delete"}[k] }

// Span is the interval in which a request took effect, if it did.
type Span struct {
	Sent, Replied time.Time // Replied is zero while pending
	Conn, Edge    int       // the connection and the edge it was on
}

// Msg is one request that may store a message.
type Msg struct {
	Span
	Channel string
	ID      string // the value published, unique in a run; "" for a delete (null)
	Kind    WriteKind
	Expect  uint64 // a CAS's position (offset)
	Outcome Outcome
	Err     string            // the error code, if any
	Reason  string            // the error's reason, for people
	Off     uint64            // its offset: replied, or learned from a delivery or a read; 0 unknown
	seq     int               // its index among its connection's writes
	seen    time.Time         // when it was first seen delivered or read, if it was
	seenOn  map[int]time.Time // the same, per edge
}

// Purge is an rtm/delete with purge: true.
type Purge struct {
	Span
	Channel string
	Outcome Outcome
	Err     string
}

// Read is an rtm/read.
type Read struct {
	Span
	Channel string
	At      uint64 // the position asked (offset), 0 for the newest
	Err     string
	Reason  string // the error's reason, for people
	Off     uint64 // the position replied, 0 for none
	Value   string // the message replied ("" null)
}

// SubMode is how a subscription chose its start.
type SubMode uint8

const (
	Live    SubMode = iota // the next message published
	AtPos                  // position
	Count                  // history.count
	Age                    // history.age (seconds)
	ReadAll                // the final read-back: position 1, batch 1
)

func (m SubMode) String() string {
	return [...]string{"live", "position", "count", "age", "readback"}[m]
}

// End says how a subscription ended.
type End uint8

const (
	Open         End = iota // still live when the run stopped: owes every acked message
	Unsubscribed            // rtm/unsubscribe ok, at EndOff
	SubError                // rtm/subscription/error (EndErr)
	Lost                    // its connection dropped, or its end is unknown
)

// Batch is one rtm/subscription/data.
type Batch struct {
	Values []string  // "" for null
	Off    uint64    // its position: the offset after its last message
	At     time.Time // when it was received
}

// Sub is one rtm/subscribe and what it delivered.
type Sub struct {
	Span
	Channel string
	Name    string // its subscription_id
	Mode    SubMode
	At      uint64 // AtPos: the position asked
	N       int64  // Count: messages; Age: seconds
	Err     string // the subscribe's error
	Reason  string // its reason, for people
	Start   uint64 // subscribe/ok's position
	Batches []Batch
	End     End
	EndOff  uint64 // Unsubscribed: the unsubscribe's position
	EndErr  string
}

// Fault is one fault injected, for the log.
type Fault struct {
	At, Mended time.Time
	Kind, What string
}

// History is what a run did and saw. Its methods are safe for concurrent
// use (the test's clients record from their readers and workers); Check
// reads it once the run has stopped.
type History struct {
	mu    sync.Mutex // guards everything below
	Begin time.Time
	// epochs are, per channel, the epochs its positions were seen in
	// and where each was first: one log, one epoch per channel (a log in
	// partitions numbers each channel in its partition's stream).
	epochs map[string]map[uint64]string
	first  map[string]uint64 // per channel, the first epoch seen
	Msgs   []*Msg
	Purges []*Purge
	Reads  []*Read
	Subs   []*Sub
	Faults []Fault
	// Failures are what went wrong outside the protocol (an edge that
	// would not start again after a fault), reported as violations.
	Failures []string
	seqs     map[int]int // the next write index of each connection
}

// NewHistory returns an empty history starting now.
func NewHistory() *History {
	return &History{Begin: time.Now(), epochs: map[string]map[uint64]string{}, first: map[string]uint64{}, seqs: map[int]int{}}
}

// Do runs f under the history's lock: the test fills in a record's reply
// through it.
func (h *History) Do(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f()
}

// AddMsg records a write request as it is sent.
func (h *History) AddMsg(m *Msg) {
	h.Do(func() {
		m.seq = h.seqs[m.Conn]
		h.seqs[m.Conn]++
		h.Msgs = append(h.Msgs, m)
	})
}

// AddPurge, AddRead and AddSub record a request as it is sent.
func (h *History) AddPurge(p *Purge) { h.Do(func() { h.Purges = append(h.Purges, p) }) }
func (h *History) AddRead(r *Read)   { h.Do(func() { h.Reads = append(h.Reads, r) }) }
func (h *History) AddSub(s *Sub)     { h.Do(func() { h.Subs = append(h.Subs, s) }) }

// AddFault records a fault of kind injected now (what: where); the returned function
// records its end, with what it did.
func (h *History) AddFault(kind, what string) func(what string) {
	var i int
	h.Do(func() { i = len(h.Faults); h.Faults = append(h.Faults, Fault{At: time.Now(), Kind: kind, What: what}) })
	return func(what string) { h.Do(func() { h.Faults[i].Mended, h.Faults[i].What = time.Now(), what }) }
}

// AddFailure records a failure outside the protocol.
func (h *History) AddFailure(what string) { h.Do(func() { h.Failures = append(h.Failures, what) }) }

// Offset returns p's offset, a position of channel, noting its epoch:
// Check reports a second epoch of a channel (the log was lost).
func (h *History) Offset(channel string, p rtm.Position, where string) uint64 {
	h.Do(func() {
		if h.first[channel] == 0 {
			h.first[channel] = p.Epoch
		}
		seen := h.epochs[channel]
		if seen == nil {
			seen = map[uint64]string{}
			h.epochs[channel] = seen
		}
		if _, ok := seen[p.Epoch]; !ok {
			seen[p.Epoch] = where
		}
	})
	return p.Offset
}

// Epoch returns the first epoch seen of channel's positions, 0 for none.
func (h *History) Epoch(channel string) uint64 {
	var e uint64
	h.Do(func() { e = h.first[channel] })
	return e
}
