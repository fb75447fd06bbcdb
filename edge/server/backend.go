package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The methods an app's backend uses through the server HTTP API
// (edge/api): no role's permissions apply to a backend (its API key
// stands for the whole app), but everything else RTM checks does, with
// the same error codes, so that a backend learns what a client would.
// The edge's own channels ($sys, $sys.*) are closed to it: see
// isSysChannel.

// Apps returns the apps the server serves, ordered by appkey. They are
// immutable (see app.App): the API reads their API keys and limits.
func (s *Server) Apps() []*app.App {
	out := make([]*app.App, 0, len(s.apps))
	for _, k := range s.AppKeys() {
		out = append(out, s.apps[k].App)
	}
	return out
}

// BackendPublish appends message (in the canonical value model of
// shared/rtm, as the JSON codec decodes it) to an app's channel on behalf
// of the app's backend and returns its position. Unlike Publish it refuses
// what an RTM publish would, as an *rtm.Error: a bad channel name
// (invalid_format), a message past the app's max_message_bytes in JSON
// (message_too_large), a new channel past the app's limit
// (channel_quota_exceeded), or, with a journal, a log that did not store it
// (unavailable), or a $sys channel (authorization_denied: isSysChannel).
// A publish to $heartbeat stores nothing, as in RTM.
func (s *Server) BackendPublish(appKey, channel string, message any) (rtm.Position, error) {
	return s.BackendPublishOnce(appKey, channel, message, "", "")
}

// isSysChannel reports whether channel is $sys or under $sys.: the
// edge's own channels, such as $sys.stats, which dashboards trust to be
// the edge's numbers. Only the edge publishes there; a backend that could
// would spoof them.
func isSysChannel(channel string) bool {
	return channel == "$sys" || strings.HasPrefix(channel, "$sys.")
}

// BackendPublishOnce is BackendPublish with an id naming the message
// (none: ""). With a journal, a message whose id the log stored within
// its duplicates window (journal.Options.Duplicates, 30 s by default),
// through any edge, is not stored again: the answer is the first one's
// position. id must name the message's content too (the first message
// stored with it is the one kept). Without a journal the id is not used:
// the caller remembers its answers (edge/api's idempotency window).
//
// exclude, when not "", is the id of a connection (the one hooks and
// Conns name, and BackendDisconnect takes) whose subscriptions are not to
// receive the message, on whichever edge of a cluster it is: everyone
// else subscribed gets it, and it is stored as any other. An id no
// connection has excludes nobody (the connection may have gone); one
// longer than MaxConnectionIDBytes is invalid_format.
func (s *Server) BackendPublishOnce(appKey, channel string, message any, id, exclude string) (rtm.Position, error) {
	a, ok := s.apps[appKey]
	if !ok {
		return rtm.Position{}, fmt.Errorf("server: backend publish: unknown appkey %q", appKey)
	}
	if err := session.CheckChannel(channel); err != nil {
		return rtm.Position{}, err
	}
	if isSysChannel(channel) {
		return rtm.Position{}, rtm.Errorf(rtm.CodeAuthorizationDenied,
			"%s is the edge's own channel ($sys and $sys.* carry what the edge reports, such as $sys.stats): a backend may not publish there", channel)
	}
	if len(exclude) > MaxConnectionIDBytes {
		return rtm.Position{}, rtm.Errorf(rtm.CodeInvalidFormat, "exclude_connection is longer than %d bytes, so no connection has it", MaxConnectionIDBytes)
	}
	if channel == rtm.HeartbeatChannel {
		return rtm.Position{}, nil
	}
	data, size, err := payload.Encode(nil, message, payload.JSON, s.edge.Codecs.Codecs(payload.JSON))
	if err != nil {
		return rtm.Position{}, rtm.Errorf(rtm.CodeInvalidFormat, "message cannot be encoded")
	}
	if max := a.MaxMessage(); size > max {
		return rtm.Position{}, rtm.Errorf(rtm.CodeMessageTooLarge, "message is %d bytes; this app's limit is %d", size, max)
	}
	key := a.StoreKey(channel)
	pos, p, err := s.edge.ChanLog.Channel(key).Append(chanlog.Message{Payload: data, Origin: exclude, ID: id, Limit: a.ChannelLimit()})
	if p != nil {
		ctx, cancel := s.edge.RequestContext(context.Background())
		pos, err = p.Wait(ctx)
		cancel()
	}
	switch {
	case errors.Is(err, store.ErrChannelLimit):
		return rtm.Position{}, session.ChannelQuotaError(a.App)
	case err != nil:
		return rtm.Position{}, s.backendRefusal(err, id)
	}
	s.edge.Counters.MessagesIn[payload.JSON].Add(1)
	a.Traffic.MessagesIn.Add(1)
	return pos, nil
}

// BackendRead reads an app's channel for its backend: the message at
// position at, or the newest when at is nil, in JSON. Found is false when
// there is none; pos is then at, or the position the next message will
// get. Refusals are *rtm.Error, as rtm/read's: invalid_format for a bad
// channel name, expired_position, unavailable.
func (s *Server) BackendRead(ctx context.Context, appKey, channel string, at *rtm.Position) (pos string, message []byte, found bool, err error) {
	a, ok := s.apps[appKey]
	if !ok {
		return "", nil, false, fmt.Errorf("server: backend read: unknown appkey %q", appKey)
	}
	if err := session.CheckChannel(channel); err != nil {
		return "", nil, false, err
	}
	asked := ""
	if at != nil {
		asked = at.String()
	}
	r, err := s.edge.ReadAt(ctx, a.StoreKey(channel), at, asked, payload.JSON)
	if err != nil {
		return "", nil, false, err
	}
	raw, found := r.Message.(rtm.RawValue)
	return r.Position, raw, found, nil
}

// BackendChannels lists an app's live channels (the channels
// max_channels counts: this edge's store's, which replicates every
// channel the log keeps, or the log's where the store holds only those
// this edge follows) whose names start with prefix and sort after after,
// in byte order, up to limit, and whether more follow (pass the last
// name back as after).
func (s *Server) BackendChannels(ctx context.Context, appKey, prefix, after string, limit int) ([]string, bool, error) {
	a, ok := s.apps[appKey]
	if !ok {
		return nil, false, fmt.Errorf("server: backend channels: unknown appkey %q", appKey)
	}
	base := a.StoreKey("")
	from := ""
	if after != "" {
		from = base + after
	}
	keys, more, err := s.edge.ChanLog.Channels(ctx, base+prefix, from, limit)
	if err != nil {
		s.log.Warn("listing channels from the log", "app", appKey, "err", err)
		return nil, false, rtm.Errorf(rtm.CodeUnavailable, "the cluster's log cannot be read now to list the channels; try again")
	}
	for i, k := range keys {
		keys[i] = k[len(base):]
	}
	return keys, more, nil
}
