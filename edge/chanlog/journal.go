package chanlog

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Journal is the log of record of a durable edge or of a cluster of
// edges (edge/journal on NATS JetStream). With one, a publish is
// acknowledged once the log stored it, offsets are the log's sequence
// numbers, the server's store is the log's replica (fed by the journal,
// not appended to by the server), and what the store does not hold
// (older history, a channel this edge has not followed) is read from the
// log.
type Journal interface {
	// Epoch is the log's incarnation: the EPOCH of every position.
	Epoch() uint64
	// Retention is how long the log keeps a message (0: no age limit).
	Retention() time.Duration
	// PublishFrom stores payload as the next message of the store key's
	// channel; done gets its offset once the log stored it and the
	// server's store holds it, or an error. done must not block. msgID
	// ("": one made up) names the message: one the log stored within its
	// duplicates window is not stored again, and done gets the first
	// one's offset. origin ("": none) is kept with the message: the
	// replica of every edge, and the frames Next returns, carry it
	// (store.Frame.Origin). ctx's deadline, if before the log's publish
	// timeout, is the publish's, as PublishExpect's.
	PublishFrom(ctx context.Context, key string, payload []byte, msgID, origin string, done func(offset uint64, err error))
	// PublishExpect is PublishFrom stored only if key's newest message is
	// at offset last (0: none); else done gets an error that is a
	// store.ErrMismatch, with a Resent() (uint64, bool) method saying
	// whether the publish was sent more than once and where the newest
	// message is: then that one may be its own first send.
	// A ttl above 0 says the message arms a dead man's switch of ttl
	// seconds publishing ttlMessage, which the log keeps with it and every
	// edge's feed announces to the function OnSwitch set.
	//
	// ctx's deadline, if before the log's publish timeout, is the
	// publish's: past it done gets an error at once (a request's one
	// deadline, part of which its reads took).
	PublishExpect(ctx context.Context, key string, payload []byte, msgID, origin string, last uint64, ttl int64, ttlMessage []byte, done func(offset uint64, err error))
	// PublishArming is PublishFrom of a message that arms a dead man's
	// switch, as PublishExpect's ttl says (the msgID is made up), with
	// ctx's deadline as PublishExpect's.
	PublishArming(ctx context.Context, key string, payload []byte, origin string, ttl int64, ttlMessage []byte, done func(offset uint64, err error))
	// OnSwitch sets the function the feed tells of each switch it applies
	// (the message at offset of key, stored at stored; replayed: stored
	// before the log opened, a restart's); it must not block. The server
	// sets it before the feed starts.
	OnSwitch(f func(key string, offset uint64, stored time.Time, ttl int64, message []byte, replayed bool))
	// Latest returns key's newest message (at 0) or its message at
	// offset at, as the log's leader holds it (no lagging copy), with
	// the Msg-Id it was published with.
	Latest(ctx context.Context, key string, at uint64) (store.Frame, string, bool, error)
	// Purge drops key's messages up to offset through (its newest) from
	// every edge's store and the log, if through is key's newest still
	// (else, or if a message was stored right after the purge, done gets
	// a store.ErrMismatch, as PublishExpect's: purge again); done gets
	// the offset of the purge, which the server's store has applied.
	Purge(ctx context.Context, key string, through uint64, msgID string, done func(offset uint64, err error))
	// PurgedThrough returns the offset up to which key was last purged
	// (0: never): positions up to it are expired.
	PurgedThrough(ctx context.Context, key string) (uint64, error)
	// Await waits until the server's store holds the message published
	// with msgID at offset.
	Await(ctx context.Context, offset uint64, msgID string) error
	// Next returns up to n messages of key from offset from on, at most
	// about maxBytes of them, and how many more follow the last one.
	Next(ctx context.Context, key string, from uint64, n, maxBytes int) ([]store.Frame, uint64, error)
	// Last returns the newest message of key at or before upTo (0: any).
	Last(ctx context.Context, key string, upTo uint64) (store.Frame, bool, error)
	// Newest returns key's newest message, unless purged, as a copy of
	// the log that holds it up to offset need reads it; reached is false
	// when the copy that answered lags behind need (ask again).
	Newest(ctx context.Context, key string, need uint64) (f store.Frame, found, reached bool, err error)
	// FirstSince returns the oldest message of key stored at or after t.
	FirstSince(ctx context.Context, key string, t time.Time) (store.Frame, bool, error)
	// Shared reports whether other edges write to the log, so that a
	// read must ask its leader (LeaderRead) to see what they stored.
	Shared() bool
	// Acknowledged returns the log's last offset as its leader holds it
	// some time after the call began: every publish acknowledged before,
	// by any edge, is at or below it.
	Acknowledged(ctx context.Context) (uint64, error)
	// LeaderRead returns, as the log's leader holds it, key's newest
	// message (from 0) or its first message at or after from.
	LeaderRead(ctx context.Context, key string, from uint64) (store.Frame, bool, error)
	// Reached reports whether the log's copy that answers reads holds
	// offset (a follower may lag a little).
	Reached(ctx context.Context, offset uint64) (bool, error)
	// Bounds returns the log's first and last offsets.
	Bounds(ctx context.Context) (first, last uint64, err error)
	// Ready says why the log cannot serve (nil if it can).
	Ready() error
	// PublishTimeout is a publish's one deadline: past it, done gets an
	// error that says whether the message may have been stored
	// (store.ErrFateUnknown) or surely was not (store.ErrNotStored).
	PublishTimeout() time.Duration
	// ResolveWindow is how long after a publish whose fate is unknown
	// the log is asked about it, later publishes held meanwhile.
	ResolveWindow() time.Duration
	// DuplicatesWindow is how long a msgID, once stored, keeps a
	// publish with the same one from being stored again.
	DuplicatesWindow() time.Duration
	// Interest reports whether the server's store holds only the
	// channels followed (Follow): the feed brings a channel while some
	// request or subscription needs it.
	Interest() bool
	// Follow has the server's store hold key's messages from now until
	// release, and returns once it holds every message of key the log
	// had acknowledged when Follow was called.
	Follow(ctx context.Context, key string) (release func(), err error)
	// Applied returns the offset up to which the server's store holds
	// key's messages (every channel's, without interest), and whether
	// it holds key at all.
	Applied(key string) (uint64, bool)
	// AppChannels reports whether the log holds key's channel, and how
	// many channels of key's group it holds (for an interest-fed store,
	// which holds only some of them).
	AppChannels(ctx context.Context, key string) (has bool, n int, err error)
	// CountChannels returns how many channels of key's group the log
	// holds, without AppChannels' counting key's as about to be made (a
	// partition key is not in).
	CountChannels(ctx context.Context, key string) (int, error)
	// ChannelKeys returns, in byte order, up to limit keys of the
	// channels the log holds that start with prefix and sort after
	// after, and whether more follow.
	ChannelKeys(ctx context.Context, prefix, after string, limit int) ([]string, bool, error)
	// WatchPrefix has the server's store hold every channel under
	// prefix, as Log.Watch says.
	WatchPrefix(ctx context.Context, prefix string, limit int) (release func(), more bool, err error)
	// Shown returns the highest offset this edge has acknowledged or
	// applied: what a copy of the log answering its reads must hold.
	Shown() uint64
}

// Journaled is the log of a durable or clustered edge: the journal is
// the log of record, st its replica (which the journal's feed appends
// to; the server never does). A log in several partitions has a journal
// per partition, and a channel is in the one Partition gives its key.
type Journaled struct {
	parts     []Journal
	j         Journal // parts[0]: for what every partition shares (its options)
	st        *store.Store
	retention func(key string) store.Retention
	log       *slog.Logger
}

// JournalConfig is what a journaled log is made of.
type JournalConfig struct {
	// Journals are the log's partitions, in order (Partition): one for a
	// log of one partition. None: the memory log of Store.
	Journals []Journal
	// Store is the journals' replica.
	Store *store.Store
	// Retention says how long a key's messages may be read.
	Retention func(key string) store.Retention
	Log       *slog.Logger
}

// NewJournaled returns the log cfg describes; cfg.Journals holds one
// journal at least.
func NewJournaled(cfg JournalConfig) *Journaled {
	return &Journaled{parts: cfg.Journals, j: cfg.Journals[0], st: cfg.Store, retention: cfg.Retention, log: cfg.Log}
}

// jn returns the journal of key's partition.
func (l *Journaled) jn(key string) Journal {
	if len(l.parts) == 1 {
		return l.j
	}
	return l.parts[Partition(key, len(l.parts))]
}

// epoch is the epoch of key's partition: every position of key's.
func (l *Journaled) epoch(key string) uint64 { return l.jn(key).Epoch() }

// Ready says why the journals cannot serve: the first partition's reason.
func (l *Journaled) Ready() error {
	for _, j := range l.parts {
		if err := j.Ready(); err != nil {
			return err
		}
	}
	return nil
}

// Windows are the journal's. The partitions' streams are made alike,
// but one may be edited apart (nats stream edit): the retention is the
// shortest of them, what every channel gets.
func (l *Journaled) Windows() Windows {
	w := Windows{Request: l.j.PublishTimeout(), Resolve: l.j.ResolveWindow(),
		Duplicates: l.j.DuplicatesWindow(), Retention: l.j.Retention()}
	for _, j := range l.parts[1:] {
		if r := j.Retention(); r > 0 && (w.Retention == 0 || r < w.Retention) {
			w.Retention = r // 0: no age limit
		}
	}
	return w
}

// OnSwitch hands f to the feed of every partition.
func (l *Journaled) OnSwitch(f func(key string, at rtm.Position, stored time.Time, ttl int64, message []byte, replayed bool)) {
	for _, j := range l.parts {
		epoch := j.Epoch()
		j.OnSwitch(func(key string, offset uint64, stored time.Time, ttl int64, message []byte, replayed bool) {
			f(key, rtm.Position{Epoch: epoch, Offset: offset}, stored, ttl, message, replayed)
		})
	}
}

// Watch has every partition's journal bring the channels under prefix:
// a prefix's channels are in all of them. In a log in partitions, the
// channels are counted in all first, so that limit bounds them together
// (each partition's alone would let K times limit be followed before
// the refusal).
func (l *Journaled) Watch(ctx context.Context, prefix string, limit int) (func(), bool, error) {
	if len(l.parts) > 1 && l.j.Interest() {
		n := 0
		for _, j := range l.parts {
			keys, more, err := j.ChannelKeys(ctx, prefix, "", limit)
			if err != nil {
				return nil, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
			}
			if n += len(keys); more || n > limit {
				return nil, true, nil
			}
		}
	}
	releases := make([]func(), 0, len(l.parts))
	releaseAll := func() {
		for _, r := range releases {
			r()
		}
	}
	for _, j := range l.parts {
		release, more, err := j.WatchPrefix(ctx, prefix, limit)
		if err != nil || more {
			releaseAll()
			if err != nil {
				return nil, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
			}
			return nil, true, nil
		}
		releases = append(releases, release)
	}
	return releaseAll, false, nil
}

// Channels lists the log's channels: the store may hold fewer (those
// this edge follows, on the interest feed; a store bounded below the log
// lets go of the oldest), as admit says.
func (l *Journaled) Channels(ctx context.Context, prefix, after string, limit int) ([]string, bool, error) {
	var keys []string
	more := false
	for _, j := range l.parts {
		ks, m, err := j.ChannelKeys(ctx, prefix, after, limit)
		if err != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		keys, more = append(keys, ks...), more || m
	}
	if len(l.parts) > 1 {
		// Each partition's keys are in order; together they are not.
		slices.Sort(keys)
		if len(keys) > limit {
			keys, more = keys[:limit], true
		}
	}
	return keys, more, nil
}

// New returns the log of cfg: journaled with a journal, else the memory
// log of cfg.Store.
func New(cfg JournalConfig) Log {
	if len(cfg.Journals) == 0 {
		return NewMemory(cfg.Store)
	}
	return NewJournaled(cfg)
}

// StorePartitions are the partitions of the store that is the replica
// of the log of js (its partitions, in order): their epochs, which
// number their positions, and Partition. Nil without a journal (the
// store picks its own epochs).
func StorePartitions(js []Journal) *store.Partitions {
	if len(js) == 0 {
		return nil
	}
	p := &store.Partitions{Epochs: make([]uint64, len(js))}
	for i, j := range js {
		p.Epochs[i] = j.Epoch()
	}
	if n := len(js); n > 1 {
		p.Of = func(key string) int { return Partition(key, n) }
	}
	return p
}

// Partition returns the partition of a store key in a log of n: fixed by
// the key (FNV-1a), so that every edge, and every start, puts a channel
// in the same one.
func Partition(key string, n int) int {
	if n <= 1 {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}
