package journal

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// countEvery is how long a count of an app's channels in the stream is
// reused: the limit it checks is approximate anyway (appends racing to
// new channels, on this edge or others, may pass it by a few).
const countEvery = time.Second

// channelCounts caches, per app, which channels the stream holds.
type channelCounts struct {
	mu   sync.Mutex
	apps map[string]channelCount
}

type channelCount struct {
	subjects map[string]uint64
	at       time.Time
}

// AppChannels reports, for an edge fed by interest (whose store holds
// only the channels it follows), whether the stream holds key's channel
// and how many channels of key's app it holds: what an app's channel
// limit is checked against.
func (j *Journal) AppChannels(ctx context.Context, key string) (has bool, n int, err error) {
	subj := j.subject(key)
	app := subj[:strings.LastIndexByte(subj, '.')]
	if err := j.countChannels(ctx, app); err != nil {
		return false, 0, err
	}
	c := &j.counts
	c.mu.Lock()
	defer c.mu.Unlock()
	cc := c.apps[app]
	_, has = cc.subjects[subj]
	n = len(cc.subjects)
	if !has && cc.subjects != nil {
		// Counted from now on as the channel its caller is about to
		// make, until the next count: else appends to new channels
		// within countEvery would all pass.
		cc.subjects[subj] = 0
	}
	return has, n, nil
}

// CountChannels returns how many channels of key's app the stream
// holds, as AppChannels does but without counting key's as made: in a
// log in partitions, the count of the partitions key is not in.
func (j *Journal) CountChannels(ctx context.Context, key string) (int, error) {
	subj := j.subject(key)
	app := subj[:strings.LastIndexByte(subj, '.')]
	if err := j.countChannels(ctx, app); err != nil {
		return 0, err
	}
	c := &j.counts
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.apps[app].subjects), nil
}

// countChannels lists, unless listed within countEvery, the channels the
// stream holds of app (the subject prefix of its channels).
func (j *Journal) countChannels(ctx context.Context, app string) error {
	c := &j.counts
	c.mu.Lock()
	cc, ok := c.apps[app]
	c.mu.Unlock()
	if ok && time.Since(cc.at) <= countEvery {
		return nil
	}
	info, err := j.stream.Info(ctx, jetstream.WithSubjectFilter(app+".*"))
	if err != nil {
		return fmt.Errorf("journal: count the channels of %s: %w", app, err)
	}
	cc = channelCount{subjects: info.State.Subjects, at: time.Now()}
	if cc.subjects == nil {
		cc.subjects = make(map[string]uint64)
	}
	c.mu.Lock()
	if c.apps == nil || len(c.apps) > 1024 {
		c.apps = make(map[string]channelCount)
	}
	c.apps[app] = cc
	c.mu.Unlock()
	return nil
}

// ChannelKeys returns, in byte order, up to limit store keys of the
// channels the stream holds that start with prefix (which names an app
// and the start of a channel name) and sort after after: an
// interest-fed store holds only the channels it follows. The list is
// the one AppChannels counts, at most countEvery old, and may name a
// channel that another request of this edge was about to make then.
func (j *Journal) ChannelKeys(ctx context.Context, prefix, after string, limit int) (keys []string, more bool, err error) {
	subj := j.subject(prefix)
	app := subj[:strings.LastIndexByte(subj, '.')]
	if err := j.countChannels(ctx, app); err != nil {
		return nil, false, err
	}
	c := &j.counts
	c.mu.Lock()
	for s, msgs := range c.apps[app].subjects {
		key, ok := j.keyOf(s)
		if ok && msgs > 0 && strings.HasPrefix(key, prefix) && key > after {
			keys = append(keys, key)
		}
	}
	c.mu.Unlock()
	slices.Sort(keys)
	if len(keys) > limit {
		return keys[:limit], true, nil
	}
	return keys, false, nil
}
