package journal

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
)

// How a follow starts: at the leader's newest, with the replay window
// preloaded (interest.go).

// start starts f at key's newest message and purge marker, as the
// stream's leader holds them, with the channel's recent messages read
// from the stream (preload), then applies what came meanwhile.
func (i *interest) start(ctx context.Context, f *follow) error {
	var pre []store.Frame
	last, purged, through, err := i.leaderLasts(ctx, f.key)
	if err == nil {
		pre, err = i.preload(ctx, f.key, last, through)
	}
	// Nothing of the channel up to its last purge marker, nor before
	// the preloaded messages, is in the store: it starts after them.
	applied := max(last.Offset, purged)
	base := applied
	if len(pre) > 0 {
		base = max(pre[0].Offset-1, purged)
	}
	if err == nil {
		err = i.st.Follow(f.key, base)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.err = err
		close(f.ready)
		return err
	}
	for _, fr := range pre {
		if fr.Offset > base {
			f.storeLocked(feedMsg{seq: fr.Offset, t: time.Unix(0, fr.Time), origin: string(fr.Origin), data: fr.Data})
		}
	}
	f.applied, f.purged, f.started = applied, purged, true
	i.noteShown(applied)
	held := f.held
	f.held = nil
	for _, m := range held {
		f.applyLocked(m)
	}
	f.drainLocked()
	close(f.ready)
	return nil
}

// recheckSoon compares a new follow with the stream's leader twice in
// its first second: its subscription reaches the leader's server a
// little after the follow starts (NATS propagates interest over routes
// as it can), and a message the leader republished before that never
// came. Without a later message to show the gap, it would come only
// with the next refill.
func (i *interest) recheckSoon(f *follow) {
	i.j.wg.Go(func() {
		for _, d := range []time.Duration{fillAfter, 4 * fillAfter} {
			t := time.NewTimer(d)
			select {
			case <-i.j.stop:
				t.Stop()
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			last, purged, _, err := i.leaderLasts(ctx, f.key)
			cancel()
			if err == nil {
				f.want(last.Offset, purged)
			}
		}
	})
}

// maxPreload bounds the messages a follow reads from the stream as it
// starts; older ones are the log's to serve.
const maxPreload = 10000

// preload returns the channel's messages after its last purge (through)
// and within the journal's replay window, up to last, the newest as the
// stream's leader holds it: what the store would hold of the channel had
// the edge followed it all along. A history or read just after a publish
// elsewhere is then served from the store; from the log, a copy that
// lags the leader (direct gets are answered by any replica) left the
// newest messages out. Here a copy's answer is checked against last and
// asked again until it reaches it.
func (i *interest) preload(ctx context.Context, key string, last store.Frame, through uint64) ([]store.Frame, error) {
	// On the store's clock, which its reads judge retention by.
	since := time.Unix(0, i.st.Now()).Add(-i.j.opts.Replay)
	if last.Offset == 0 || last.Offset <= through || time.Unix(0, last.Time).Before(since) {
		return nil, nil
	}
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		pre, ok, err := i.readRecent(ctx, key, since, last.Offset, through)
		if err != nil || ok {
			return pre, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("journal: follow %s: the log's copy stays behind %d: %w", i.j.subject(key), last.Offset, ctx.Err())
		case <-time.After(pause):
		}
	}
}

// readRecent is one try of preload: ok is false if the copy that
// answered had not reached last.
func (i *interest) readRecent(ctx context.Context, key string, since time.Time, last, through uint64) ([]store.Frame, bool, error) {
	first, found, err := i.j.FirstSince(ctx, key, since)
	if err != nil {
		return nil, false, err
	}
	if !found || first.Offset > last {
		return nil, false, nil // the copy lacks last, newer than since
	}
	var pre []store.Frame
	for from := max(first.Offset, through+1); ; {
		frames, more, err := i.j.Next(ctx, key, from, fillBatch, 0)
		if err != nil {
			return nil, false, err
		}
		for _, fr := range frames {
			if fr.Offset > last {
				return trimPreload(pre), true, nil
			}
			pre = append(pre, fr)
		}
		if len(pre) > 0 && pre[len(pre)-1].Offset == last {
			return trimPreload(pre), true, nil
		}
		if len(frames) == 0 || more == 0 {
			return nil, false, nil
		}
		from = frames[len(frames)-1].Offset + 1
	}
}

// trimPreload keeps the newest maxPreload messages.
func trimPreload(pre []store.Frame) []store.Frame {
	if len(pre) > maxPreload {
		return pre[len(pre)-maxPreload:]
	}
	return pre
}
