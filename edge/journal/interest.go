package journal

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/store"
)

// The interest feed (Options.Interest) brings an edge the messages of the
// channels it has interest in, not the whole stream: the stream
// republishes every message it stores on a core NATS subject
// (RePublish, sluicefeed.<stream>.<app>.<channel>), and the edge
// subscribes to the subjects of the channels its clients use, for as long
// as they do. A core subscription costs no Raft proposal, unlike a
// JetStream consumer per channel (CLUSTER.md), and the edge without a
// client receives nothing.
//
// Core NATS may drop a message (a slow consumer, a reconnection, a
// stream leader lost between storing a message and republishing it), so
// each republished message names the channel's previous one
// (Nats-Last-Sequence): a message whose previous one the edge has not
// applied waits while the gap is read from the stream, and an
// acknowledgment the feed does not bring soon (the gap no later message
// shows) reads it too. A channel's follow starts at its newest message
// as the stream's leader holds it; what came before is the log's to
// serve (catch-up), as for a channel this edge has never held.
//
// Purge markers (purge.go) are republished on the channel's purge
// subject, which its follow subscribes to beside the channel's.

// feedPrefix starts the subjects the stream republishes its messages on.
const feedPrefix = "sluicefeed."

// Republish headers (nats-server's JSStream, JSSubject, JSSequence,
// JSTimeStamp, JSLastSequence).
const (
	hdrSubject = "Nats-Subject"
	hdrSeq     = "Nats-Sequence"
	hdrTime    = "Nats-Time-Stamp"
	hdrLastSeq = "Nats-Last-Sequence"
)

// followLinger is how long a channel stays followed after its last
// subscriber left: a client that reconnects, or a page that reloads,
// finds it still there instead of paying its start again.
const followLinger = 5 * time.Second

// fillAfter is how long an acknowledgment (or a message past a gap)
// waits for the feed before the gap is read from the stream.
const fillAfter = 250 * time.Millisecond

// inbound bounds the republished messages queued for the dispatcher;
// past it NATS reports a slow consumer, and every follow is refilled.
const inbound = 1 << 16

// interest is the journal's interest feed: the follows of the channels
// this edge has interest in.
type interest struct {
	j   *Journal
	st  *store.Store
	in  chan *nats.Msg
	mu  sync.Mutex // guards follows and the follows' refs and subs
	fol map[string]*follow
	// watches are the prefix subscriptions' interest, by app (watch.go).
	watches map[string]*appWatch
	// switches is the subscription to the other edges' switches
	// (interest_switch.go).
	switches *nats.Subscription
	// shown is the highest sequence this edge acknowledged or applied:
	// what a read of the log waits for the answering copy to hold.
	shown atomic.Uint64
}

// republishConfig is the stream's RePublish for the interest feed.
func republishConfig(stream, prefix string) *jetstream.RePublish {
	return &jetstream.RePublish{Source: prefix + ">", Destination: feedPrefix + stream + ".>"}
}

// feedSubject is the subject a message of the stream subject subj is
// republished on.
func (j *Journal) feedSubject(subj string) string {
	return feedPrefix + j.opts.Stream + "." + strings.TrimPrefix(subj, j.prefix)
}

// startInterest starts the interest feed of st: nothing is followed yet.
func (j *Journal) startInterest(ctx context.Context, st *store.Store) error {
	i := &interest{j: j, st: st, in: make(chan *nats.Msg, inbound), fol: make(map[string]*follow)}
	j.interest = i
	if err := i.watchSwitches(); err != nil {
		j.log.Warn("journal: the other edges' switches will not be announced here", "err", err)
	}
	// The switches armed before the edge heard the announcements: the
	// last message of each channel up to the stream's newest now. One
	// armed since is announced, perhaps twice (a standby is set once).
	var info *jetstream.StreamInfo
	err := j.retry(ctx, "find the switches armed before", func(ctx context.Context) (err error) {
		info, err = j.stream.Info(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if !info.TimeStamp.IsZero() {
		j.skew = time.Until(info.TimeStamp)
	}
	j.feed.markCaughtUp() // nothing to replay: a follow starts at the newest
	j.wg.Go(i.dispatch)
	j.wg.Go(i.watch)
	j.wg.Go(func() { j.recoverSwitches(info.State.LastSeq+1, info.State.FirstSeq) })
	j.log.Info("journal feed started", "stream", j.opts.Stream, "epoch", j.epoch, "feed", "interest")
	return nil
}

// Interest reports whether the journal feeds its store by interest:
// the store then holds the channels being followed (Follow), each from
// where its follow started.
func (j *Journal) Interest() bool { return j.opts.Interest }

// Shown returns the highest sequence this edge acknowledged or applied.
func (j *Journal) Shown() uint64 {
	if i := j.interest; i != nil {
		return i.shown.Load()
	}
	return j.feed.st.Applied(j.opts.Partition)
}

// noteShown raises shown to seq.
func (i *interest) noteShown(seq uint64) {
	for {
		old := i.shown.Load()
		if seq <= old || i.shown.CompareAndSwap(old, seq) {
			return
		}
	}
}

// Follow makes the store hold key's messages from now on, until release
// is called, and returns once it holds every message of key (and has
// applied every purge of it) that the stream's leader held when Follow
// was called. applied then is the sequence up to which the store holds
// the channel's messages. Calls are counted: the feed stops after the
// last release (and followLinger).
func (j *Journal) Follow(ctx context.Context, key string) (release func(), err error) {
	i := j.interest
	if i == nil {
		return func() {}, nil
	}
	i.mu.Lock()
	f := i.fol[key]
	fresh := f == nil
	if fresh {
		if f, err = i.newFollow(key); err != nil {
			i.mu.Unlock()
			return nil, err
		}
		i.fol[key] = f
	}
	f.refs++
	i.mu.Unlock()
	release = sync.OnceFunc(func() { i.release(f) })
	if fresh {
		if err = i.start(ctx, f); err == nil {
			i.recheckSoon(f)
		}
	} else {
		err = i.catchUp(ctx, f)
	}
	if err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// Applied returns the sequence up to which the store holds key's
// messages, and false if key is not followed.
func (j *Journal) Applied(key string) (uint64, bool) {
	i := j.interest
	if i == nil {
		return j.feed.st.Applied(j.opts.Partition), true
	}
	i.mu.Lock()
	f := i.fol[key]
	i.mu.Unlock()
	if f == nil {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied, f.started
}

// newFollow subscribes to key's subjects. i.mu.
func (i *interest) newFollow(key string) (*follow, error) {
	f := &follow{i: i, key: key, h: i.st.Channel(key), ready: make(chan struct{})}
	subj := i.j.subject(key)
	for n, s := range []string{subj, i.j.purgeSubject(key)} {
		sub, err := i.j.nc.ChanSubscribe(i.j.feedSubject(s), i.in)
		if err != nil {
			f.unsubscribe()
			return nil, fmt.Errorf("journal: follow %s: %w", subj, err)
		}
		f.subs[n] = sub
	}
	return f, nil
}

// catchUp waits until f has started and holds what the stream's leader
// holds of its channel now.
func (i *interest) catchUp(ctx context.Context, f *follow) error {
	select {
	case <-f.ready:
	case <-ctx.Done():
		return fmt.Errorf("journal: follow %s: %w", i.j.subject(f.key), ctx.Err())
	}
	if f.err != nil {
		return f.err
	}
	last, purged, _, err := i.leaderLasts(ctx, f.key)
	if err != nil {
		return err
	}
	return f.await(ctx, last.Offset, purged)
}

// leaderLasts returns key's newest message and the sequence of its
// newest purge marker with the offset that marker purged through, as the
// stream's leader holds them (zero: none).
func (i *interest) leaderLasts(ctx context.Context, key string) (last store.Frame, purged, through uint64, err error) {
	last, _, _, err = i.j.Latest(ctx, key, 0)
	if err != nil {
		return store.Frame{}, 0, 0, fmt.Errorf("journal: follow %s: %w", i.j.subject(key), err)
	}
	ps := i.j.purgeSubject(key)
	pm, _, found, err := i.j.leaderGet(ctx, ps, &msgGetRequest{LastFor: ps})
	if err != nil {
		return store.Frame{}, 0, 0, fmt.Errorf("journal: follow %s: %w", i.j.subject(key), err)
	}
	if found {
		purged = pm.Offset
		through, _ = strconv.ParseUint(string(pm.Data), 10, 64)
	}
	return last, purged, through, nil
}

// release drops one interest in f's channel; the last one stops the
// follow after followLinger, unless a new one came meanwhile.
func (i *interest) release(f *follow) {
	i.mu.Lock()
	f.refs--
	idle := f.refs == 0
	i.mu.Unlock()
	if !idle {
		return
	}
	t := time.NewTimer(followLinger)
	i.j.wg.Go(func() {
		defer t.Stop()
		select {
		case <-t.C:
		case <-i.j.stop:
		}
		i.mu.Lock()
		defer i.mu.Unlock()
		if f.refs > 0 || i.fol[f.key] != f {
			return
		}
		delete(i.fol, f.key)
		f.unsubscribe()
		// Under i.mu: a new follow of the channel starts after this.
		i.st.Unfollow(f.key)
		f.stop(fmt.Errorf("%w: the channel is no longer followed", ErrUnavailable))
	})
}

// Following returns how many channels the edge follows.
func (j *Journal) Following() int {
	i := j.interest
	if i == nil {
		return 0
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return len(i.fol)
}

// close ends every follow: the edge stops.
func (i *interest) close() {
	i.mu.Lock()
	fs := i.fol
	i.fol = make(map[string]*follow)
	for _, f := range fs {
		f.unsubscribe()
	}
	for _, w := range i.watches {
		w.unsubscribe()
	}
	if i.switches != nil {
		_ = i.switches.Unsubscribe()
	}
	i.watches = nil
	i.mu.Unlock()
	for _, f := range fs {
		f.stop(fmt.Errorf("%w: journal closed", ErrUnavailable))
	}
}
