package server

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/session"
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
	if err := session.CheckChannel(channel); err != nil {
		return HistoryPage{}, err
	}
	key := a.StoreKey(channel)
	asked := ""
	if at != nil {
		asked = at.String()
	}
	var page HistoryPage
	err := s.edge.ChanLog.History(ctx, key, at, count, limit, func(frames []store.Frame, epoch uint64, more bool) error {
		var err error
		page, err = s.historyPage(frames, epoch, more)
		return err
	})
	if err != nil {
		return HistoryPage{}, session.ExpiredOr(err, asked)
	}
	return page, nil
}

// historyPage encodes frames in JSON; more says a following page exists.
func (s *Server) historyPage(frames []store.Frame, epoch uint64, more bool) (HistoryPage, error) {
	page := HistoryPage{Messages: make([]HistoryMessage, 0, len(frames))}
	for _, f := range frames {
		msg, err := payload.In(f.Data, payload.JSON)
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
