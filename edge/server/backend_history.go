package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// HistoryMessage is one message of a HistoryPage: its own position and
// its JSON.
type HistoryMessage struct {
	Position rtm.Position
	JSON     []byte
}

// HistoryPage is a page of a channel's messages, oldest first. Next, when
// set, is where the following page starts: more messages follow.
type HistoryPage struct {
	Messages []HistoryMessage
	Next     *rtm.Position
}

// BackendHistory returns up to limit (> 0) messages of an app's channel,
// oldest first: from position at (inclusive, as RTM's subscribe), or,
// with at nil, from the oldest of the newest count (> 0) readable ones.
// Refusals are *rtm.Error: invalid_format for a bad channel name,
// expired_position for a start no longer kept (or of another history),
// unavailable when a journal cannot be read. With a journal the messages
// come from the log, which holds channels this edge does not follow.
func (s *Server) BackendHistory(ctx context.Context, appKey, channel string, at *rtm.Position, count, limit int) (HistoryPage, error) {
	a, ok := s.apps[appKey]
	if !ok {
		return HistoryPage{}, fmt.Errorf("server: backend history: unknown appkey %q", appKey)
	}
	if err := checkChannel(channel); err != nil {
		return HistoryPage{}, err
	}
	key := storeKey(a, channel)
	asked := ""
	if at != nil {
		asked = at.String()
	}
	var page HistoryPage
	var err error
	if s.journal != nil {
		page, err = s.logHistory(ctx, key, at, count, limit)
	} else {
		page, err = s.storeHistory(key, at, count, limit)
	}
	if err != nil {
		return HistoryPage{}, expiredOr(err, asked)
	}
	return page, nil
}

// storeHistory reads a history page from the store, through a cursor
// closed before it returns.
func (s *Server) storeHistory(key string, at *rtm.Position, count, limit int) (HistoryPage, error) {
	if at == nil && !s.store.Has(key) {
		// Subscribe would create the channel; there is nothing to read.
		return HistoryPage{}, nil
	}
	c, err := s.store.Subscribe(key, store.Start{Position: at, HistoryCount: count})
	if err != nil {
		return HistoryPage{}, err
	}
	defer c.Close()
	epoch := c.Position().Epoch
	// One more than the page, to know whether another page follows.
	frames, err := c.Read(make([]store.Frame, 0, limit+1), 0)
	if errors.Is(err, store.ErrOutOfSync) {
		return HistoryPage{}, store.ErrExpired // deleted under the read
	}
	if err != nil {
		return HistoryPage{}, fmt.Errorf("server: history of %q: %w", key, err)
	}
	more := len(frames) > limit
	return s.historyPage(frames[:min(len(frames), limit)], epoch, more)
}

// logHistory reads a history page from the journal's log.
func (s *Server) logHistory(ctx context.Context, key string, at *rtm.Position, count, limit int) (HistoryPage, error) {
	j := s.journal
	var from uint64
	if at != nil {
		if at.Epoch != j.Epoch() {
			return HistoryPage{}, store.ErrExpired
		}
		from = at.Offset
	} else {
		start, found, err := s.logHistoryStart(ctx, key, logSpan{count: count})
		if err != nil || !found {
			return HistoryPage{}, err
		}
		from = start
	}
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	if err := s.logCaughtUp(ctx, s.store.Applied()); err != nil {
		return HistoryPage{}, err
	}
	if err := s.checkReadable(ctx, key, from); err != nil {
		return HistoryPage{}, err
	}
	frames, more, err := j.Next(ctx, key, from, limit, 0)
	if err != nil {
		return HistoryPage{}, fmt.Errorf("%w: %w", errLog, err)
	}
	ret, now := s.retention(key).Normalized(), s.store.Now()
	if len(frames) > 0 && !readable(ret, now, frames[0].Time, uint64(len(frames)-1)+more) {
		// The oldest asked for is past its retention: the same answer a
		// subscription at that position gets.
		return HistoryPage{}, store.ErrExpired
	}
	return s.historyPage(frames, j.Epoch(), more > 0)
}

// historyPage encodes frames in JSON; more says a following page exists.
func (s *Server) historyPage(frames []store.Frame, epoch uint64, more bool) (HistoryPage, error) {
	page := HistoryPage{Messages: make([]HistoryMessage, 0, len(frames))}
	for _, f := range frames {
		msg, err := payloadFor(f.Data, jsonCodec)
		if err != nil {
			return HistoryPage{}, fmt.Errorf("server: history: %w", err)
		}
		page.Messages = append(page.Messages, HistoryMessage{
			Position: rtm.Position{Epoch: epoch, Offset: f.Offset},
			JSON:     append([]byte(nil), msg...), // the block's bytes are the store's
		})
	}
	if more && len(frames) > 0 {
		page.Next = &rtm.Position{Epoch: epoch, Offset: frames[len(frames)-1].Offset + 1}
	}
	return page, nil
}
