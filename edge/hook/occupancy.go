package hook

import (
	"sync"
	"sync/atomic"
)

// Occupancy counts an app's live subscriptions per channel on this edge,
// to post channel_occupied at a channel's first and channel_vacated at
// its last. mu is held while an event is posted, so that a channel's
// events are queued in the order its counts changed. Lock order: the
// connection's lock (a connection's end closes its subscriptions under
// it) before Occupancy.mu before the events sender's.
type Occupancy struct {
	events *Events
	mu     sync.Mutex     // guards subs
	subs   map[string]int // channel -> live subscriptions; absent: none
}

// NewOccupancy returns the occupancy of the app whose events ev posts.
func NewOccupancy(ev *Events) *Occupancy {
	return &Occupancy{events: ev, subs: make(map[string]int)}
}

// Occupy counts one subscription to channel, before it is handed over,
// and returns what uncounts it; that vacate does so once however often
// it is called (a subscription's close may come twice).
func (o *Occupancy) Occupy(channel string) (vacate func()) {
	o.mu.Lock()
	o.subs[channel]++
	if o.subs[channel] == 1 {
		_ = o.events.Post(KindChannelOccupied, ChannelData{Channel: channel})
	}
	o.mu.Unlock()
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.subs[channel]--; o.subs[channel] <= 0 {
			delete(o.subs, channel)
			_ = o.events.Post(KindChannelVacated, ChannelData{Channel: channel})
		}
	}
}
