package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Publish appends a message to an app's channel on behalf of the edge
// itself (for example $sys.stats), bypassing permissions and the app's
// channel limit. The message must
// be in the canonical value model of shared/rtm.
func (s *Server) Publish(appKey, channel string, message any) (rtm.Position, error) {
	a, ok := s.apps[appKey]
	if !ok {
		return rtm.Position{}, fmt.Errorf("server: publish: unknown appkey %q", appKey)
	}
	if err := rtm.ValidateChannel(channel); err != nil {
		return rtm.Position{}, fmt.Errorf("server: publish: %w", err)
	}
	data, _, err := payload.Encode(nil, message, payload.Carrier, s.edge.Codecs.Codecs(payload.Carrier))
	if err != nil {
		return rtm.Position{}, fmt.Errorf("server: publish to %q: %w", channel, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishWait)
	defer cancel()
	pos, p, err := s.edge.ChanLog.Channel(a.StoreKey(channel)).Append(chanlog.Message{Payload: data})
	if p != nil {
		pos, err = p.Wait(ctx)
	}
	if errors.Is(err, chanlog.ErrInFlight) {
		// The edge's own messages ($sys.stats) must not hold their
		// sender (and a shutdown) through an outage; the log goes on.
		return rtm.Position{}, fmt.Errorf("server: publish: not confirmed by the log within %v", publishWait)
	}
	if err != nil {
		return rtm.Position{}, fmt.Errorf("server: publish to %q: %w", channel, session.AppendError(err))
	}
	return pos, nil
}

// publishWait bounds how long Publish waits for the log.
const publishWait = 5 * time.Second

// AppKeys lists the appkeys the server serves.
func (s *Server) AppKeys() []string {
	keys := make([]string, 0, len(s.apps))
	for k := range s.apps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
