package journal

import (
	"context"
	"fmt"
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
	subj := Subject(key)
	app := subj[:strings.LastIndexByte(subj, '.')]
	c := &j.counts
	c.mu.Lock()
	cc, ok := c.apps[app]
	c.mu.Unlock()
	if !ok || time.Since(cc.at) > countEvery {
		info, err := j.stream.Info(ctx, jetstream.WithSubjectFilter(app+".*"))
		if err != nil {
			return false, 0, fmt.Errorf("journal: count the channels of %s: %w", app, err)
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
	}
	c.mu.Lock()
	defer c.mu.Unlock()
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
