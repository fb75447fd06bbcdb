package journal

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrStreamLost: the stream this journal opened was deleted, or deleted
// and created again (a new epoch). The edge's positions and replica
// belong to the old one; it cannot go on serving them, so it stops
// publishing and applying, and reports not ready, until it is restarted
// on the stream as it is now.
var ErrStreamLost = errors.New("journal: the stream is gone")

// checkStream compares the stream with the one the journal opened. An
// answer that the stream does not exist, or exists with another creation
// time, loses it; any other failure (NATS away, no leader) says nothing.
// It returns the stream's info when it could be read.
func (j *Journal) checkStream(ctx context.Context) *jetstream.StreamInfo {
	info, err := j.stream.Info(ctx)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		j.loseStream(fmt.Errorf("%w: %s was deleted while this edge served it (epoch %d)", ErrStreamLost, j.opts.Stream, j.epoch))
		return nil
	case err != nil:
		return nil
	}
	if now := uint64(info.Created.UnixMicro()); now != j.epoch {
		j.loseStream(fmt.Errorf("%w: %s was deleted and created again (epoch %d, now %d)", ErrStreamLost, j.opts.Stream, j.epoch, now))
		return nil
	}
	return info
}

// loseStream records err as the reason the stream is lost (once), stops
// the feed, fails what waits for it, and tells Options.OnLost.
func (j *Journal) loseStream(err error) {
	if !j.lost.CompareAndSwap(nil, &err) {
		return
	}
	j.log.Error("journal: the stream this edge serves is gone; restart the edge on the stream as it is now", "err", err)
	j.feed.stop(err)
	j.pub.failAll(err)
	if j.opts.OnLost != nil {
		j.opts.OnLost(err)
	}
}

// unavailable is the error of a publish the lost stream ends.
func unavailable(err error) error { return fmt.Errorf("%w: %w", ErrUnavailable, err) }

// Lost returns why the stream is lost (an ErrStreamLost), or nil.
func (j *Journal) Lost() error {
	if p := j.lost.Load(); p != nil {
		return *p
	}
	return nil
}
