package server

import (
	"github.com/sluicehq/sluice/edge/deadman"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/tally"
)

// Stats is a snapshot of the edge's counters, for metrics and the
// $sys.stats channel. Counters only grow; gauges go up and down.
type Stats struct {
	Connections      int64 // gauge: open WebSocket connections, HTTP streams included
	ConnectionsTotal uint64
	// HTTPStreams is the gauge of the connections carried over HTTP
	// (/v2/stream, /v2/subscribe, /v2/publish), HTTPStreamsTotal the
	// count of those opened.
	HTTPStreams      int64
	HTTPStreamsTotal uint64
	// CodecConnections is the gauge of open connections per codec,
	// indexed like Codecs.
	CodecConnections [payload.NumCodecs]int64
	Subscriptions    int64 // gauge: live subscriptions
	CodecTraffic
	OutOfSync    uint64 // subscriptions ended by out_of_sync
	FastForward  uint64 // fast_forward skips
	LogResumes   uint64 // subscriptions that fell behind the store and read on from the log
	LogRetries   uint64 // log reads of a prefix subscription's channel that failed and wait to be tried again
	SlowCloses   uint64 // connections closed for not reading
	AuthFailures uint64
	// TTL counts the dead man's switches (publishes with ttl): fired,
	// skipped (something else was published first), taken over as a
	// standby, passed, retried (deadman.Stats says which is which).
	TTL deadman.Stats
	// Refused counts refused requests by error code, indexed like
	// RefusalCodes.
	Refused [tally.NumRefusalCodes]uint64
	// Apps is each configured app's traffic, by appkey.
	Apps []AppTraffic
}

// Codecs names the codecs in the order of Stats' per-codec arrays.
func Codecs() []string { return payload.Names() }

// CodecTraffic is an edge's traffic per codec, indexed like Codecs.
type CodecTraffic struct {
	MessagesIn  [payload.NumCodecs]uint64 // messages published (publish, write, delete)
	BytesIn     [payload.NumCodecs]uint64 // bytes of frames read
	MessagesOut [payload.NumCodecs]uint64 // messages delivered in subscription data
	BytesOut    [payload.NumCodecs]uint64 // bytes of frames written
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	c, ttl := s.edge.Counters, s.edge.TTL.Stats()
	st := Stats{
		Connections:      s.conns.active.Load(),
		ConnectionsTotal: c.ConnectionsTotal.Load(),
		HTTPStreams:      s.httpStreams.Load(),
		HTTPStreamsTotal: s.httpStreamsTotal.Load(),
		Subscriptions:    c.Subscriptions.Load(),
		OutOfSync:        c.OutOfSync.Load(),
		FastForward:      c.FastForward.Load(),
		LogResumes:       c.LogResumes.Load(),
		LogRetries:       c.LogRetries.Load(),
		SlowCloses:       c.SlowCloses.Load(),
		AuthFailures:     c.AuthFailures.Load(),
		TTL:              ttl,
		Refused:          c.Refused(),
	}
	st.Apps = s.appTrafficStats()
	for i := range payload.NumCodecs {
		st.CodecConnections[i] = s.edge.Codecs.Open(i)
		st.MessagesIn[i] = c.MessagesIn[i].Load()
		st.BytesIn[i] = c.BytesIn[i].Load()
		st.MessagesOut[i] = c.MessagesOut[i].Load()
		st.BytesOut[i] = c.BytesOut[i].Load()
	}
	return st
}
