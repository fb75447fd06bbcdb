package server_test

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/cbor"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestFanoutSharedFrame delivers to subscribers of one channel woken
// together, whom the fan-out workers serve with a data frame shared by
// those whose frames would be the same bytes: each still gets its own
// codec and its own subscription id, and the publisher of an exclude_self
// message (a subscriber too) does not get it, while the others do.
func TestFanoutSharedFrame(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	type member struct {
		c  *codecClient
		id string // its subscription's id
	}
	cs := []codec.Codec{json.Codec{}, msgpack.Codec{}, cbor.Codec{}}
	var ms []member
	for i := range 24 {
		m := member{c: e.dialCodec(t, cs[i%len(cs)]), id: "room"}
		body := &rtm.SubscribeBody{Channel: "room"}
		if i%4 == 3 {
			m.id, body.SubscriptionID = "other", "other"
		}
		m.c.call(rtm.ActionSubscribe, body, nil)
		ms = append(ms, m)
	}
	self := ms[0].c // publishes with exclude_self
	pub := e.dialCodec(t, json.Codec{})
	pub.call(rtm.ActionPublish, &rtm.PublishBody{Channel: "room", Message: "first"}, nil)
	self.send(&rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(100),
		Body: &rtm.PublishBody{Channel: "room", Message: "mine", ExcludeSelf: true}})
	// Its ok, and "first", which may come before or after it.
	early := self.collect(func(r *received) bool { return len(r.oks) == 1 && len(r.messages("room")) == 1 })
	pub.call(rtm.ActionPublish, &rtm.PublishBody{Channel: "room", Message: "last"}, nil)

	for i, m := range ms {
		want, before := []any{"first", "mine", "last"}, 0
		if i == 0 {
			want, before = []any{"first", "last"}, 1
		}
		r := m.c.collect(func(r *received) bool { return len(r.messages(m.id)) >= len(want)-before })
		if i == 0 {
			r.data[m.id] = append(early.data[m.id], r.data[m.id]...)
		}
		if got := r.messages(m.id); !reflect.DeepEqual(got, want) {
			t.Errorf("subscriber %d (%s, %s): got %v, want %v", i, m.c.codec.Name(), m.id, got, want)
		}
		if len(r.data) != 1 {
			t.Errorf("subscriber %d (%s, %s): data under the ids of %v", i, m.c.codec.Name(), m.id, r.data)
		}
	}
}
