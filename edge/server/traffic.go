package server

import (
	"slices"
	"sync/atomic"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Counters whose labels are bounded by configuration: refusals by RTM
// error code (a fixed set) and traffic by app (the apps are configured at
// New, never created by clients), so that no client can grow the metrics.

// codeTooManyConnections is the HTTP refusal of a WebSocket upgrade past
// limits.connections (never an RTM reply).
const codeTooManyConnections rtm.Code = "too_many_connections"

// refusalCodes are the error codes refusals are counted under, in the
// order of Stats.Refused: RTM error replies, and the refusals of
// WebSocket upgrades (invalid_appkey, unavailable while draining,
// too_many_connections). A refusal under any other code (none is sent
// today) counts as the last, "other".
var refusalCodes = []rtm.Code{
	rtm.CodeAuthorizationDenied, rtm.CodeInvalidFormat, rtm.CodeInvalidOperation, rtm.CodeInvalidService,
	rtm.CodeJSONParseError, rtm.CodeCBORParseError, rtm.CodeAuthenticationFailed, rtm.CodeAuthMethodNotAllowed,
	rtm.CodeAlreadySubscribed, rtm.CodeNotSubscribed, rtm.CodeExpiredPosition, rtm.CodeInvalidFilter,
	rtm.CodeSubscriptionQuotaExceeded, rtm.CodeMessageTooLarge, rtm.CodeTooManyRequests,
	rtm.CodeChannelQuotaExceeded, rtm.CodeUnavailable, rtm.CodeInvalidAppkey, codeTooManyConnections,
	"other",
}

// numRefusalCodes sizes Stats.Refused.
const numRefusalCodes = 20

// refusalIndex maps a code to its index in refusalCodes.
var refusalIndex = func() map[rtm.Code]int {
	if len(refusalCodes) != numRefusalCodes {
		panic("server: numRefusalCodes does not match refusalCodes")
	}
	m := make(map[rtm.Code]int, len(refusalCodes))
	for i, c := range refusalCodes {
		m[c] = i
	}
	return m
}()

// RefusalCodes names the error codes in the order of Stats.Refused.
func RefusalCodes() []string {
	names := make([]string, len(refusalCodes))
	for i, c := range refusalCodes {
		names[i] = string(c)
	}
	return names
}

// countRefusal counts one request refused with code, answered or not (a
// request without id gets no reply, but was refused all the same).
func (s *Server) countRefusal(code rtm.Code) {
	i, ok := refusalIndex[code]
	if !ok {
		i = numRefusalCodes - 1
	}
	s.counters.refused[i].Add(1)
}

// appTraffic counts one app's traffic; its connections add to it.
type appTraffic struct {
	messagesIn, messagesOut, bytesIn, bytesOut atomic.Uint64
}

// AppTraffic is a snapshot of one app's traffic, counters since the edge
// started.
type AppTraffic struct {
	Appkey      string
	MessagesIn  uint64 // messages its clients published (publish, write, delete)
	MessagesOut uint64 // messages delivered to its subscribers
	BytesIn     uint64 // bytes of frames read from its clients
	BytesOut    uint64 // bytes of frames written to them
}

// appTrafficStats returns every app's traffic, ordered by appkey.
func (s *Server) appTrafficStats() []AppTraffic {
	out := make([]AppTraffic, 0, len(s.traffic))
	for key, t := range s.traffic {
		out = append(out, AppTraffic{Appkey: key, MessagesIn: t.messagesIn.Load(), MessagesOut: t.messagesOut.Load(),
			BytesIn: t.bytesIn.Load(), BytesOut: t.bytesOut.Load()})
	}
	slices.SortFunc(out, func(a, b AppTraffic) int {
		if a.Appkey < b.Appkey {
			return -1
		}
		if a.Appkey > b.Appkey {
			return 1
		}
		return 0
	})
	return out
}
