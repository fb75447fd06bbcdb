package hook

import (
	"encoding/json"
	"testing"
)

// TestOccupancy posts channel_occupied at a channel's first subscription
// and channel_vacated at its last, once each however often a
// subscription's vacate is called.
func TestOccupancy(t *testing.T) {
	t.Parallel()
	srv, batches, _ := eventsBackend(t, nil)
	h := newHooks(t, &Config{Events: EventsConfig{URL: srv.URL, Batch: 1}})
	o := NewOccupancy(h.Events())
	a := o.Occupy("news")
	b := o.Occupy("news")
	a()
	a() // a second close of the same subscription counts nothing
	c := o.Occupy("sport")
	b()
	c()
	want := []struct{ kind, channel string }{
		{KindChannelOccupied, "news"}, {KindChannelOccupied, "sport"},
		{KindChannelVacated, "news"}, {KindChannelVacated, "sport"},
	}
	got := receive(t, batches, len(want))
	for i, ev := range got {
		var d ChannelData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if ev.Kind != want[i].kind || d.Channel != want[i].channel {
			t.Fatalf("event %d: %s %s, want %s %s", i, ev.Kind, d.Channel, want[i].kind, want[i].channel)
		}
	}
}
