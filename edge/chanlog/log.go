// Package chanlog is the channel log an edge serves from: where the
// messages of its channels are appended, read and subscribed to.
//
// Two logs implement Log. The memory log is an edge alone: the store
// (edge/store, the block queue) is the log, and an append is stored
// before it returns. The journaled log is a durable or clustered edge:
// NATS JetStream (edge/journal) is the log of record, the store is its
// replica, fed by the journal's feed, an append is answered once the log
// stored it, and what the replica does not hold (older history, a
// channel this edge has not followed, what another edge stored a moment
// ago) is read from the log. The server holds one and never asks which.
//
// The conformance suite (chanlogtest) runs against both.
package chanlog

import (
	"context"
	"errors"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Log is a channel log. Keys are the store's: an app's key, a NUL, the
// channel's name. Refusals are the store's errors (store.ErrChannelLimit,
// store.ErrTooLarge, store.ErrMismatch, store.ErrExpired, store.ErrFuture)
// or those of a log that did not answer: ErrUnreadable (a read, and
// nothing was written), store.ErrNotStored and store.ErrFateUnknown (an
// append).
type Log interface {
	// Channel returns a handle that appends to key, for a publisher to
	// keep: what finding the channel costs is paid once.
	Channel(key string) Channel
	// AppendIf appends w to key, on the condition it names (if any),
	// checked in one step with the append against the channel's newest
	// message, which it returns (the previous message) read into
	// buf[:0]. A condition not met stores nothing, and the error is a
	// store.ErrMismatch with prior the channel's newest instead.
	AppendIf(ctx context.Context, key string, w Write, buf []byte) (rtm.Position, store.Prior, error)
	// Fire appends payload to key if key's newest message is still the
	// one at at: a dead man's switch (rtm/publish's ttl) going off.
	Fire(ctx context.Context, key string, at rtm.Position, payload []byte) error
	// Purge drops every message of key up to its newest (rtm/delete with
	// purge) and returns the newest of them, read into buf[:0].
	Purge(ctx context.Context, key string, buf []byte) (store.Prior, error)
	// Read returns key's message at or after at, or its newest readable
	// one when at is nil.
	Read(ctx context.Context, key string, at *rtm.Position) (Reading, error)
	// Subscribe opens a subscription of key at start. A history the
	// store's replica does not hold all of comes with a CatchUp to read
	// first (nil: the cursor has all of it).
	Subscribe(ctx context.Context, key string, start store.Start) (*store.Cursor, *CatchUp, error)
	// Oldest opens a subscription at key's oldest message the channel's
	// rule keeps: where a fast-forward lands.
	Oldest(ctx context.Context, key string) (*store.Cursor, *CatchUp, error)
	// History calls page once with up to limit messages of key from at
	// (nil: the newest count), the history's epoch, and whether more
	// follow. The frames are valid only during the call.
	History(ctx context.Context, key string, at *rtm.Position, count, limit int, page func(frames []store.Frame, epoch uint64, more bool) error) error
	// Channels returns, in byte order, up to limit (> 0) keys of the
	// live channels whose keys start with prefix and sort after after,
	// and whether more follow: the store's, or the log's where there is
	// one (the store may hold fewer: it is the log's replica, or cache).
	Channels(ctx context.Context, prefix, after string, limit int) (keys []string, more bool, err error)
	// Watch has the log bring this edge every channel whose key starts
	// with prefix, those it holds (at most limit of them: more says there
	// were more, and nothing is watched) and those made later, until
	// release: a prefix subscription's interest. A log that brings every
	// channel anyway does nothing.
	Watch(ctx context.Context, prefix string, limit int) (release func(), more bool, err error)
	// OnSwitch sets the function told of each dead man's switch another
	// edge armed (the message at at of key, stored at stored; replayed:
	// stored before the log opened); it must not block. A log of one
	// edge never calls it.
	OnSwitch(f func(key string, at rtm.Position, stored time.Time, ttl int64, message []byte, replayed bool))
	// Ready says why the log cannot serve (nil if it can).
	Ready() error
	// Windows are how long a request may wait for the log, what a
	// publish whose fate is unknown entails, and how long the log keeps
	// a message (zero: the log never waits, and keeps what the channels'
	// rules do).
	Windows() Windows
}

// Channel appends to one channel.
type Channel interface {
	// Append stores m as the channel's next message. A log that stores
	// it before returning returns its position and a nil Pending; one
	// that answers later returns a Pending that will have the position.
	// An error is a refusal made before anything was sent.
	Append(m Message) (rtm.Position, *Pending, error)
}

// Message is what an append stores.
type Message struct {
	Payload []byte
	// Origin is an opaque tag the message's frames carry (the id of a
	// connection with exclude_self), "" for none.
	Origin string
	// ID is the message's idempotency key ("": none): a log that keeps
	// one does not store a message whose ID it stored within its
	// duplicates window, and answers the first one's position.
	ID string
	// Limit is the channel limit of the key's group (its app): a message
	// that would create a channel past it is refused with
	// store.ErrChannelLimit. 0: none.
	Limit int
}

// Write is a conditional append: rtm/write with position, a publish with
// read or ttl, rtm/delete with read.
type Write struct {
	Message
	// Compare says Expect must name the channel's newest readable message
	// (0:0 or a position past the newest: none is readable).
	Compare bool
	Expect  rtm.Position
	// Previous says the previous message is wanted.
	Previous bool
	// TTL, when not 0, says the message arms a dead man's switch of TTL
	// seconds that publishes TTLMessage, which the log keeps with it.
	TTL        int64
	TTLMessage []byte
}

// Reading is the answer to a read.
type Reading struct {
	Frame store.Frame
	Found bool
	// Position is the frame's when found; else at, or what a read of
	// nothing answers: the position the channel's next message will get,
	// or 0:0 for a channel the log holds nothing of.
	Position rtm.Position
}

// Windows are a log's waits and its retention.
type Windows struct {
	// Request is a request's one deadline: its reads of the log and its
	// publish share it. 0: the log does not wait.
	Request time.Duration
	// Resolve is how long after a publish whose fate is unknown the log
	// is asked about it, later publishes held meanwhile.
	Resolve time.Duration
	// Duplicates is how long a message's ID keeps a message with the same
	// ID from being stored again.
	Duplicates time.Duration
	// Retention is how long the log keeps a message, whatever the
	// channel's rule (0: no limit of its own).
	Retention time.Duration
}

// ErrUnreadable says the log could not be read: nothing was written.
var ErrUnreadable = errors.New("chanlog: the log cannot be read")

// readable reports whether a message stored at t, with newer messages of
// its channel after it, may still be read under r: younger than the TTL,
// or one of the newest HistoryCount younger than HistoryAge.
func readable(r store.Retention, now, t int64, newer uint64) bool {
	age := now - t
	if age <= int64(r.TTL) {
		return true
	}
	return r.HistoryCount > 0 && newer < uint64(r.HistoryCount) && age <= int64(r.HistoryAge)
}
