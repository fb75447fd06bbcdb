package loadgen

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// tally is what one subscriber has seen, for the live line and the
// window's marks. Its delivery goroutine alone adds to it, so the cache
// line stays with the core running it; readers sum every subscriber's.
type tally struct {
	missing   atomic.Int64 // gaps open now: messages skipped, not (yet) arrived
	delivered atomic.Int64 // distinct messages received, for the nodes' figures
	dups      atomic.Int64
	reordered atomic.Int64
}

// totals sums what the subscribers have seen.
type totals struct{ delivered, missing, dups, reordered int64 }

// tallies sums the subscribers' tallies (any goroutine). The distinct
// messages received are the deliveries the lanes' gates counted: deliver
// counts one there for each message it does not skip (foreign or
// duplicate).
func (r *run) tallies() totals {
	t := totals{delivered: int64(r.made())}
	for _, s := range r.subs {
		t.missing += s.tally.missing.Load()
		t.dups += s.tally.dups.Load()
		t.reordered += s.tally.reordered.Load()
	}
	return t
}

// subscriber is the accounting of one subscribing connection.
type subscriber struct {
	idx     int
	channel int
	node    int // the node it is connected to (0 but for a NodeDriver)
	r       *run
	// lanes are the ids of the lanes publishing on the channel, in
	// ascending order (shared by the channel's subscribers): a stream is
	// kept for each of them only, not for every lane of the run.
	lanes []uint16
	tally tally
	feed  []byte // a feed message made again, to compare (delivery goroutine)

	// mu guards streams: the connection's delivery goroutine writes them,
	// the final count reads them.
	mu      sync.Mutex
	streams []Stream // parallel to lanes
}

// deliver handles one message; the driver calls it on the connection's
// delivery goroutine, one message at a time.
func (s *subscriber) deliver(payload string) {
	now := s.r.clock()
	var st Stamp
	var err error
	if s.r.feedLevels > 0 {
		st, err = parseFeed(&s.r.feeds, &s.feed, payload, s.r.feedLevels)
	} else {
		st, err = ParseStamp(payload)
	}
	slot, ok := 0, false
	if err == nil {
		slot, ok = laneSlot(s.lanes, st.Publisher)
	}
	if !ok {
		if errors.Is(err, errCorrupt) {
			// Not counted as delivered: the stream shows it as lost too.
			s.r.problems.add(ProblemCorrupt, fmt.Errorf("%w: %.80q", err, payload))
			return
		}
		s.r.problems.add("foreign message", fmt.Errorf("%w: %.60q", errStamp, payload))
		return
	}
	s.mu.Lock()
	str := &s.streams[slot]
	before := str.Missing()
	arr := str.Observe(st.Seq)
	after := str.Missing()
	s.mu.Unlock()
	t := &s.tally
	switch arr {
	case Duplicate:
		t.dups.Add(1)
		return
	case Late:
		t.reordered.Add(1)
	}
	if after != before {
		t.missing.Add(int64(after) - int64(before))
	}
	s.r.lat.Record(s.idx, now-st.Sent)
	if nl := s.r.nodes.lat; nl != nil { // a run over several nodes
		t.delivered.Add(1)
		nl[s.node].Record(s.idx, now-st.Sent)
	}
	s.r.lanes[st.Publisher].gate.delivered()
}

// laneSlot returns the index of lane id in lanes (ascending), which has
// one entry when the channels outnumber the lanes.
func laneSlot(lanes []uint16, id uint16) (int, bool) {
	if len(lanes) == 1 {
		return 0, lanes[0] == id
	}
	return slices.BinarySearch(lanes, id)
}

// problems counts the errors of a run by kind, keeping the first message
// of each.
type problems struct {
	total atomic.Uint64
	mu    sync.Mutex // guards byKind
	kinds map[string]*ErrorCount
}

// ErrorCount is how often one kind of error happened.
type ErrorCount struct {
	Count uint64 `json:"count"`
	// First is the first such error's text.
	First string `json:"first"`
}

// add counts one error of a kind.
func (p *problems) add(kind string, err error) {
	p.total.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kinds == nil {
		p.kinds = map[string]*ErrorCount{}
	}
	e := p.kinds[kind]
	if e == nil {
		e = &ErrorCount{First: err.Error()}
		p.kinds[kind] = e
	}
	e.Count++
}

// snapshot copies the counts.
func (p *problems) snapshot() map[string]ErrorCount {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]ErrorCount, len(p.kinds))
	for k, v := range p.kinds {
		out[k] = *v
	}
	return out
}
