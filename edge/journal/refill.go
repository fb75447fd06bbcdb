package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// How the interest feed finds what core NATS dropped with nothing after
// it to show the gap: it compares its follows with the stream.

// watch looks at the stream every second, as the ordered feed's
// watchdog does (stream lost, leader reachable), fails the
// acknowledgments the feed did not back in time, and refills every
// follow when the connection may have dropped republished messages (a
// reconnection) and every refillEvery otherwise (a slow consumer, a
// leader lost between storing a message and republishing it), until the
// journal stops.
func (i *interest) watch() {
	tick := time.NewTicker(i.j.opts.watchEvery)
	defer tick.Stop()
	reconnects, last := i.j.nc.Stats().Reconnects, time.Now()
	for {
		select {
		case <-i.j.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		info := i.j.checkEpoch(ctx)
		cancel()
		if i.j.Lost() != nil {
			return
		}
		if info != nil {
			i.j.reach.noteLook(info, info.State.LastSeq, time.Now())
		}
		now := time.Now()
		for _, f := range i.follows() {
			f.expire(now)
		}
		if r := i.j.nc.Stats().Reconnects; r != reconnects || now.Sub(last) >= refillEvery {
			reconnects, last = r, now
			i.refillAll()
		}
	}
}

// refillEvery is how often every follow is compared with the stream's
// leader when nothing showed a loss.
const refillEvery = 10 * time.Second

// follows returns the follows.
func (i *interest) follows() []*follow {
	i.mu.Lock()
	defer i.mu.Unlock()
	fs := make([]*follow, 0, len(i.fol))
	for _, f := range i.fol {
		fs = append(fs, f)
	}
	return fs
}

// refillAll has every started follow compare itself with the stream and
// read what it lacks. The newest message of each followed channel and
// its purge subject come from batched multi-last direct gets (one request
// per refillBatch subjects, not two leader gets per channel): a copy
// that lags answers older sequences, which ask for nothing, and the next
// round sees what it missed.
func (i *interest) refillAll() {
	fs := i.follows()
	for len(fs) > 0 {
		n := min(len(fs), refillBatch/2)
		batch := fs[:n]
		fs = fs[n:]
		subjects := make([]string, 0, 2*n)
		for _, f := range batch {
			subjects = append(subjects, i.j.subject(f.key), i.j.purgeSubject(f.key))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		lasts, err := i.j.lastsOf(ctx, subjects)
		cancel()
		if err != nil {
			i.j.log.Debug("journal: interest feed: compare with the stream", "err", err)
			return
		}
		for _, f := range batch {
			f.want(lasts[i.j.subject(f.key)], lasts[i.j.purgeSubject(f.key)])
		}
	}
}

// refillBatch is how many subjects one multi-last get of refillAll asks
// for.
const refillBatch = 256

// lastsOf returns the sequence of the newest message of each subject the
// stream holds one of, as the copy that answers holds them.
func (j *Journal) lastsOf(ctx context.Context, subjects []string) (map[string]uint64, error) {
	data, err := json.Marshal(&getRequest{MultiLastFor: subjects, Batch: len(subjects)})
	if err != nil {
		return nil, err
	}
	inbox := j.nc.NewRespInbox()
	sub, err := j.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("journal: multi-last get: %w", err)
	}
	defer sub.Unsubscribe()
	if err := j.nc.PublishRequest(j.direct, inbox, data); err != nil {
		return nil, fmt.Errorf("journal: multi-last get: %w", err)
	}
	lasts := make(map[string]uint64, len(subjects))
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("journal: multi-last get from %s: %w", j.opts.Stream, err)
		}
		if len(m.Data) == 0 && m.Header.Get("Status") != "" {
			return lasts, nil // 204 (end of batch) or 404 (none)
		}
		if seq, err := strconv.ParseUint(m.Header.Get(hdrSeq), 10, 64); err == nil {
			lasts[m.Header.Get(hdrSubject)] = seq
		}
	}
}
