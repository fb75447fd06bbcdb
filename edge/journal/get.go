package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/edge/store"
)

// getRequest is a JetStream direct get request (JSApiMsgGetRequest).
type getRequest struct {
	Seq          uint64     `json:"seq,omitempty"`
	NextFor      string     `json:"next_by_subj,omitempty"`
	Batch        int        `json:"batch,omitempty"`
	MaxBytes     int        `json:"max_bytes,omitempty"`
	StartTime    *time.Time `json:"start_time,omitempty"`
	MultiLastFor []string   `json:"multi_last,omitempty"`
	UpToSeq      uint64     `json:"up_to_seq,omitempty"`
}

// getTimeout bounds one direct get when ctx has no deadline.
const getTimeout = 10 * time.Second

// get sends a direct get and collects its messages: one for a plain
// request, up to the end-of-batch marker for a batch (or multi-last)
// one, whose pending count (messages matching past the last returned) it
// returns. A request that matches nothing returns no frames.
func (j *Journal) get(ctx context.Context, req *getRequest) ([]store.Frame, uint64, error) {
	var frames []store.Frame
	end, err := j.visit(ctx, req, func(m *nats.Msg) error {
		f, err := frameOf(m)
		frames = append(frames, f)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return frames, end.pending, nil
}

// batchEnd is what a direct get's end-of-batch marker says.
type batchEnd struct {
	// pending counts the messages matching past the last one returned.
	pending uint64
	// upTo is, for a multi-last request, the sequence the answer holds
	// up to: without UpToSeq, the last one of the copy that answered.
	upTo uint64
}

// visit sends a direct get and calls each for every message of its
// answer: one for a plain request, up to the end-of-batch marker for a
// batch (or multi-last) one, whose figures it returns. A request that
// matches nothing calls each never and returns a zero batchEnd.
func (j *Journal) visit(ctx context.Context, req *getRequest, each func(*nats.Msg) error) (batchEnd, error) {
	j.counters.reads.Add(1)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, getTimeout)
		defer cancel()
	}
	data, err := json.Marshal(req)
	if err != nil {
		return batchEnd{}, fmt.Errorf("journal: direct get: %w", err)
	}
	inbox := j.nc.NewRespInbox()
	sub, err := j.nc.SubscribeSync(inbox)
	if err != nil {
		return batchEnd{}, fmt.Errorf("journal: direct get: %w", err)
	}
	defer sub.Unsubscribe()
	if err := j.nc.PublishRequest(j.direct, inbox, data); err != nil {
		return batchEnd{}, fmt.Errorf("journal: direct get: %w", err)
	}
	batch := req.Batch > 0 || len(req.MultiLastFor) > 0
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return batchEnd{}, fmt.Errorf("journal: direct get from %s: %w", j.opts.Stream, err)
		}
		if len(m.Data) == 0 {
			switch st := m.Header.Get("Status"); st {
			case "404":
				return batchEnd{}, nil
			case "204": // end of batch
				np, _ := strconv.ParseUint(m.Header.Get("Nats-Num-Pending"), 10, 64)
				upTo, _ := strconv.ParseUint(m.Header.Get("Nats-UpTo-Sequence"), 10, 64)
				return batchEnd{pending: np, upTo: upTo}, nil
			case "":
			default:
				return batchEnd{}, fmt.Errorf("journal: direct get from %s: status %s %s",
					j.opts.Stream, st, m.Header.Get("Description"))
			}
		}
		if err := each(m); err != nil {
			return batchEnd{}, err
		}
		if !batch {
			return batchEnd{}, nil
		}
	}
}

// frameOf reads a direct get answer's sequence and time.
func frameOf(m *nats.Msg) (store.Frame, error) {
	seq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
	if err != nil {
		return store.Frame{}, fmt.Errorf("journal: direct get answer without a sequence: %w", err)
	}
	ts, err := time.Parse(time.RFC3339Nano, m.Header.Get("Nats-Time-Stamp"))
	if err != nil {
		return store.Frame{}, fmt.Errorf("journal: direct get answer without a time: %w", err)
	}
	f := store.Frame{Offset: seq, Time: ts.UnixNano(), Data: m.Data}
	if o := m.Header.Get(OriginHeader); o != "" {
		f.Origin = []byte(o) // a catch-up's frames only
	}
	return f, nil
}

// Next returns up to n messages of the channel with store key key from
// offset from on (inclusive), at most about maxBytes of them, and how many
// more the stream holds after the last one returned.
func (j *Journal) Next(ctx context.Context, key string, from uint64, n, maxBytes int) ([]store.Frame, uint64, error) {
	return j.get(ctx, &getRequest{Seq: max(from, 1), NextFor: j.subject(key), Batch: n, MaxBytes: maxBytes})
}

// Last returns the newest message of the channel at or before offset
// upTo (0: the newest of all).
func (j *Journal) Last(ctx context.Context, key string, upTo uint64) (store.Frame, bool, error) {
	fs, _, err := j.get(ctx, &getRequest{MultiLastFor: []string{j.subject(key)}, UpToSeq: upTo, Batch: 1})
	if err != nil || len(fs) == 0 {
		return store.Frame{}, false, err
	}
	return fs[0], true, nil
}

// FirstSince returns the oldest message of the channel stored at or
// after t.
func (j *Journal) FirstSince(ctx context.Context, key string, t time.Time) (store.Frame, bool, error) {
	fs, _, err := j.get(ctx, &getRequest{StartTime: &t, NextFor: j.subject(key)})
	if err != nil || len(fs) == 0 {
		return store.Frame{}, false, err
	}
	return fs[0], true, nil
}

// Newest returns the channel's newest message as a copy of the log that
// holds the stream up to need reads it; reached is false when the copy
// that answered lags behind need (JetStream answers direct gets from any
// replica, and one may lag this edge's feed). One multi-last request
// asks for the channel's newest message and its newest purge marker
// together, so the answer is one copy's at one moment, and a message
// the marker purged is no answer even from a copy that has not applied
// the stream's purge yet (the marker is stored first, purge.go). When
// neither exists, the answer says nothing of the copy, and Reached is
// asked (of a copy: the one answering may differ).
func (j *Journal) Newest(ctx context.Context, key string, need uint64) (f store.Frame, found, reached bool, err error) {
	subj, psubj := j.subject(key), j.purgeSubject(key)
	var through uint64
	end, err := j.visit(ctx, &getRequest{MultiLastFor: []string{subj, psubj}, Batch: 2}, func(m *nats.Msg) error {
		if m.Header.Get("Nats-Subject") == psubj {
			n, err := strconv.ParseUint(string(m.Data), 10, 64)
			if err != nil {
				return fmt.Errorf("journal: purge marker of %s: %w", subj, err)
			}
			through = n
			return nil
		}
		var err error
		f, err = frameOf(m)
		found = err == nil
		return err
	})
	switch {
	case err != nil:
		return store.Frame{}, false, false, err
	case end.upTo == 0 && need == 0:
		return store.Frame{}, false, true, nil // nothing to have reached
	case end.upTo == 0:
		reached, err = j.Reached(ctx, need)
		return store.Frame{}, false, reached, err
	case end.upTo < need:
		return store.Frame{}, false, false, nil
	case found && f.Offset <= through:
		return store.Frame{}, false, true, nil // purged
	}
	return f, found, true, nil
}

// Reached reports whether the server answering direct gets holds the
// stream up to seq: a follower may lag the leader (and this edge's feed)
// by a little, and an answer that there is nothing more is only complete
// from one that has reached where the reader is going.
func (j *Journal) Reached(ctx context.Context, seq uint64) (bool, error) {
	fs, _, err := j.get(ctx, &getRequest{Seq: max(seq, 1), Batch: 1})
	if err != nil {
		return false, err
	}
	return len(fs) > 0 && fs[0].Offset >= seq, nil
}

// Bounds returns the stream's first and last sequences: offsets below
// first are gone from the log. Only a leader's answer counts: while a
// replicated stream has no leader, each follower answers stream info
// with its own copy, which may lag what was acknowledged (a subscribe
// then started before acknowledged messages, a position handed out by
// another edge was called beyond the newest).
func (j *Journal) Bounds(ctx context.Context) (first, last uint64, err error) {
	info, err := j.stream.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("journal: stream info: %w", err)
	}
	if c := info.Cluster; c != nil && c.Leader == "" {
		return 0, 0, fmt.Errorf("journal: stream info: %w", errLeaderless)
	}
	return info.State.FirstSeq, info.State.LastSeq, nil
}

// errLeaderless: a follower of a stream without a leader answered.
var errLeaderless = errors.New("the stream has no leader; a follower answered")

// counters are the journal's statistics, all atomic.
type counters struct {
	published, failed, retries, applied, reads, feedRestarts atomic.Uint64
	own, soleFallbacks                                       atomic.Uint64
	// resolved and abandoned count the publishes whose fate was unknown
	// (fate.go) that JetStream answered later, and those it never did.
	resolved, abandoned atomic.Uint64
	// fenced counts the publishes failed because their fence was stored
	// (fence.go).
	fenced atomic.Uint64
	// reordered counts the publishes stored after one sent later.
	reordered atomic.Uint64
}

// Stats is a snapshot of the journal's counters.
type Stats struct {
	Published uint64 // publishes acknowledged by JetStream
	Failed    uint64 // publishes that failed (timeout, refusal)
	Retries   uint64 // publish attempts sent again
	Stored    uint64 // messages the feed appended to the store
	Reads     uint64 // direct gets (reads the store could not serve)
	// FeedRestarts counts the feed's consumers replaced by its watchdog.
	FeedRestarts uint64
	// Own counts the publishes a sole writer (Options.SoleWriter)
	// appended to the store itself, of Stored; SoleFallbacks the times it
	// went back to reading the stream (a gap that did not fill).
	Own           uint64
	SoleFallbacks uint64
	// Resolved counts the publishes failed as ErrFateUnknown that
	// JetStream answered later (stored or refused), Abandoned those it
	// had not answered within the duplicates window.
	Resolved  uint64
	Abandoned uint64
	// Fenced counts the publishes failed as ErrNotStored because a later
	// one was stored first and their fence took their place (fence.go).
	Fenced uint64
	// Reordered counts the publishes acknowledged at a sequence past
	// that of a publish this edge sent after them (docs/cluster.md: the
	// window fences leave; or the later one's Msg-Id was stored before).
	Reordered uint64
	Lag       uint64 // acknowledged publishes waiting for the feed to apply them
	Applied   uint64 // the highest sequence the feed has applied
	// Reconnects counts the NATS connection's reconnections; Connected
	// says whether it is up.
	Reconnects uint64
	Connected  bool
}

// Add adds the counters of another partition's journal to s: a log in
// partitions is reported as one (Applied then sums the partitions'
// sequences: the messages applied). The connection is the same one.
func (s *Stats) Add(o Stats) {
	s.Published += o.Published
	s.Failed += o.Failed
	s.Retries += o.Retries
	s.Stored += o.Stored
	s.Reads += o.Reads
	s.FeedRestarts += o.FeedRestarts
	s.Own += o.Own
	s.SoleFallbacks += o.SoleFallbacks
	s.Resolved += o.Resolved
	s.Abandoned += o.Abandoned
	s.Fenced += o.Fenced
	s.Reordered += o.Reordered
	s.Lag += o.Lag
	s.Applied += o.Applied
}

// Stats returns the journal's counters.
func (j *Journal) Stats() Stats {
	s := Stats{
		Published:     j.counters.published.Load(),
		Failed:        j.counters.failed.Load(),
		Retries:       j.counters.retries.Load(),
		Resolved:      j.counters.resolved.Load(),
		Abandoned:     j.counters.abandoned.Load(),
		Fenced:        j.counters.fenced.Load(),
		Reordered:     j.counters.reordered.Load(),
		Stored:        j.counters.applied.Load(),
		Reads:         j.counters.reads.Load(),
		FeedRestarts:  j.counters.feedRestarts.Load(),
		Own:           j.counters.own.Load(),
		SoleFallbacks: j.counters.soleFallbacks.Load(),
		Connected:     j.nc.IsConnected(),
	}
	s.Reconnects = j.nc.Stats().Reconnects
	held := uint64(j.feed.heldN.Load()) // a sole writer's, past a gap
	j.feed.mu.Lock()
	s.Lag, s.Applied = uint64(len(j.feed.waiters))+held, j.feed.applied
	j.feed.mu.Unlock()
	return s
}
