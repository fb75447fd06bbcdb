package server

import (
	"slices"

	"github.com/sluicehq/sluice/edge/tally"
)

// RefusalCodes names the error codes in the order of Stats.Refused.
func RefusalCodes() []string { return tally.RefusalCodes() }

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
	out := make([]AppTraffic, 0, len(s.apps))
	for key, a := range s.apps {
		t := a.Traffic
		out = append(out, AppTraffic{Appkey: key, MessagesIn: t.MessagesIn.Load(), MessagesOut: t.MessagesOut.Load(),
			BytesIn: t.BytesIn.Load(), BytesOut: t.BytesOut.Load()})
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
