// Package tally is what the edge counts: connections, subscriptions,
// messages and bytes in and out per codec, the reasons subscriptions and
// connections end, refused requests by error code, and each app's
// traffic. Every counter is written with atomic adds by the goroutines
// of the connections (their readers and writers), and read for metrics
// and the $sys.stats channel.
//
// The labels are bounded by configuration: refusals by RTM error code (a
// fixed set) and traffic by app (the apps are configured when the edge
// starts, never created by clients), so that no client can grow the
// metrics.
package tally

import (
	"sync/atomic"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Counters are an edge's counters. Counters only grow; Subscriptions is
// a gauge. The per-codec arrays are indexed as edge/payload's codecs.
type Counters struct {
	ConnectionsTotal atomic.Uint64
	Subscriptions    atomic.Int64 // gauge: live subscriptions
	MessagesIn       [payload.NumCodecs]atomic.Uint64
	BytesIn          [payload.NumCodecs]atomic.Uint64
	MessagesOut      [payload.NumCodecs]atomic.Uint64
	BytesOut         [payload.NumCodecs]atomic.Uint64
	OutOfSync        atomic.Uint64 // subscriptions ended by out_of_sync
	FastForward      atomic.Uint64 // fast_forward skips
	LogResumes       atomic.Uint64 // subscriptions that fell behind the store and read on from the log
	LogRetries       atomic.Uint64 // log reads of a prefix subscription's channel that failed and wait to be tried again
	SlowCloses       atomic.Uint64 // connections closed for not reading
	AuthFailures     atomic.Uint64
	refused          [NumRefusalCodes]atomic.Uint64
}

// App counts one app's traffic; its connections add to it.
type App struct {
	MessagesIn, MessagesOut, BytesIn, BytesOut atomic.Uint64
}

// CodeTooManyConnections is the HTTP refusal of a WebSocket upgrade past
// the edge's connection limit (never an RTM reply).
const CodeTooManyConnections rtm.Code = "too_many_connections"

// refusalCodes are the error codes refusals are counted under, in the
// order of Refused: RTM error replies, and the refusals of WebSocket
// upgrades (invalid_appkey, unavailable while draining,
// too_many_connections). A refusal under any other code (none is sent
// today) counts as the last, "other".
var refusalCodes = []rtm.Code{
	rtm.CodeAuthorizationDenied, rtm.CodeInvalidFormat, rtm.CodeInvalidOperation, rtm.CodeInvalidService,
	rtm.CodeJSONParseError, rtm.CodeCBORParseError, rtm.CodeAuthenticationFailed, rtm.CodeAuthMethodNotAllowed,
	rtm.CodeAlreadySubscribed, rtm.CodeNotSubscribed, rtm.CodeExpiredPosition, rtm.CodeInvalidFilter,
	rtm.CodeSubscriptionQuotaExceeded, rtm.CodeMessageTooLarge, rtm.CodeTooManyRequests,
	rtm.CodeChannelQuotaExceeded, rtm.CodeUnavailable, rtm.CodeInvalidAppkey, CodeTooManyConnections,
	"other",
}

// NumRefusalCodes sizes Refused.
const NumRefusalCodes = 20

// refusalIndex maps a code to its index in refusalCodes.
var refusalIndex = func() map[rtm.Code]int {
	if len(refusalCodes) != NumRefusalCodes {
		panic("tally: NumRefusalCodes does not match refusalCodes")
	}
	m := make(map[rtm.Code]int, len(refusalCodes))
	for i, c := range refusalCodes {
		m[c] = i
	}
	return m
}()

// RefusalCodes names the error codes in the order of Refused.
func RefusalCodes() []string {
	names := make([]string, len(refusalCodes))
	for i, c := range refusalCodes {
		names[i] = string(c)
	}
	return names
}

// Refuse counts one request refused with code, answered or not (a
// request without id gets no reply, but was refused all the same).
func (c *Counters) Refuse(code rtm.Code) {
	i, ok := refusalIndex[code]
	if !ok {
		i = NumRefusalCodes - 1
	}
	c.refused[i].Add(1)
}

// Refused returns the refusals counted, by code, in the order of
// RefusalCodes.
func (c *Counters) Refused() [NumRefusalCodes]uint64 {
	var out [NumRefusalCodes]uint64
	for i := range c.refused {
		out[i] = c.refused[i].Load()
	}
	return out
}
