package loadgen

import (
	"sync"
	"sync/atomic"
)

// counterShards spreads a hot counter over cache lines: delivery
// goroutines on different cores then rarely write the same line.
const counterShards = 16

// counter is a sum kept in shards; any goroutine may add, any may read.
type counter struct {
	shards [counterShards]struct {
		n atomic.Int64
		_ [56]byte
	}
}

func (c *counter) add(key int, n int64) { c.shards[uint(key)%counterShards].n.Add(n) }

func (c *counter) load() int64 {
	var sum int64
	for i := range c.shards {
		sum += c.shards[i].n.Load()
	}
	return sum
}

// tally is what the subscribers have seen, for the live line.
type tally struct {
	delivered counter // distinct messages received
	missing   counter // gaps open now: messages skipped, not (yet) arrived
	dups      counter
	reordered counter
}

// subscriber is the accounting of one subscribing connection.
type subscriber struct {
	idx     int
	channel int
	r       *run

	// mu guards streams: the connection's delivery goroutine writes them,
	// the final count reads them.
	mu      sync.Mutex
	streams []Stream // by publisher id
}

// deliver handles one message; the driver calls it on the connection's
// delivery goroutine.
func (s *subscriber) deliver(payload string) {
	now := s.r.clock()
	st, err := ParseStamp(payload)
	if err != nil || int(st.Publisher) >= len(s.streams) {
		s.r.problems.add("foreign message", errStamp)
		return
	}
	s.mu.Lock()
	str := &s.streams[st.Publisher]
	before := str.Missing()
	arr := str.Observe(st.Seq)
	after := str.Missing()
	s.mu.Unlock()
	t := &s.r.tally
	switch arr {
	case Duplicate:
		t.dups.add(s.idx, 1)
		return
	case Late:
		t.reordered.add(s.idx, 1)
	}
	if after != before {
		t.missing.add(s.idx, int64(after)-int64(before))
	}
	t.delivered.add(s.idx, 1)
	s.r.lat.Record(s.idx, now-st.Sent)
	s.r.lanes[st.Publisher].gate.delivered()
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
