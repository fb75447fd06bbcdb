package delivery

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/shared/rtm"
)

// viewRig is a deliveryRig whose 16 stored messages are maps, with n
// subscriptions of the channel through statement ("" for none); the
// connection speaks JSON, so a projection is transcoded from the carrier.
func newViewRig(tb testing.TB, n int, statement string) (*deliveryRig, []*Subscription) {
	tb.Helper()
	r := newDeliveryRig(tb)
	msgs := make([]any, 16)
	for i := range msgs {
		msgs[i] = map[string]any{"who": fmt.Sprint("animal", i), "speed": int64(i), "text": strings.Repeat("x", 64)}
	}
	key := "demo\x00zoo"
	cur := r.storeFrom(tb, "zoo", nil, msgs...)
	r.frames = r.read(tb, cur, 16)
	subs := make([]*Subscription, n)
	for i := range subs {
		subs[i] = &Subscription{ID: "zoo", Channel: "zoo", Cursor: cur}
		if statement == "" {
			continue
		}
		sv, _, err := filter.Compile(&rtm.SubscribeBody{SubscriptionID: "zoo", Filter: statement})
		if err != nil {
			tb.Fatal(err)
		}
		sv.Join(&r.views, key, statement)
		tb.Cleanup(sv.Leave)
		subs[i].View = sv
	}
	return r, subs
}

// viewStatements are the views the benchmark compares with the raw
// channel: a three-condition WHERE, and a projection.
var viewStatements = []struct{ name, statement string }{
	{"raw", ""},
	{"where", "SELECT * FROM zoo WHERE speed >= 0 AND who LIKE 'animal%' AND speed < 100"},
	{"projection", "SELECT who, speed * 2 AS double FROM zoo WHERE speed >= 0"},
}

// BenchmarkSendDataView1000 lays out one data PDU of 16 messages for each
// of 1,000 subscribers of the raw channel or of one view: subscribers of
// one statement share its results, so a view costs about what the raw
// channel does (issue 16: no more than 1,000 of the raw channel).
func BenchmarkSendDataView1000(b *testing.B) {
	for _, tc := range viewStatements {
		b.Run(tc.name, func(b *testing.B) {
			r, subs := newViewRig(b, 1000, tc.statement)
			b.ReportAllocs()
			for b.Loop() {
				for _, sub := range subs {
					if err := r.c.sendData(r.w, sub, r.frames); err != nil {
						b.Fatal(err)
					}
					r.w.out = r.w.out[:0]
				}
			}
		})
	}
}

// TestViewSharedAllocs: once one subscriber's writer has made a
// projection's results, another subscriber of the statement takes them:
// its batch of 16 JSON messages allocates nothing (alone, each message
// would be transcoded for it, one allocation apiece).
func TestViewSharedAllocs(t *testing.T) {
	r, subs := newViewRig(t, 2, viewStatements[2].statement)
	send := func(sub *Subscription) {
		if err := r.c.sendData(r.w, sub, r.frames); err != nil {
			t.Fatal(err)
		}
		r.w.out = r.w.out[:0]
	}
	send(subs[0]) // makes the results, and grows the writer's buffers
	if n := testing.AllocsPerRun(100, func() { send(subs[1]) }); n != 0 {
		t.Errorf("a second subscriber of the view allocates %v times per batch, want 0", n)
	}
	if got := r.views.Len(); got != 1 {
		t.Errorf("%d shares for one statement, want 1", got)
	}
}
