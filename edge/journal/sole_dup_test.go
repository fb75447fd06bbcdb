package journal

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/internal/poll"
)

// replyOrder hands JetStream's acknowledgments to a journal's publisher
// in an order of the test's, as a lost acknowledgment and its retry's
// would reorder them: the first acknowledgment of each publish (the
// n-th to come is the n-th publish's: one connection, answered in
// order) waits until those before it in order have gone; one not in
// order is lost, and its retries' answers go at once, as do those of
// the publishes after the first n.
type replyOrder struct {
	j     *Journal
	n0    int   // the publishes ordered: the first n0
	order []int // publishes, by index, in the order their first acknowledgments go
	// The fields below belong to the subscription's goroutine.
	n    int               // first acknowledgments come so far
	lost map[string]bool   // reply subjects whose first acknowledgment was lost
	held map[int]*nats.Msg // first acknowledgments waiting for their turn, by publish
	next int               // of order: the next to go
}

// reorderReplies makes j's publisher take the acknowledgments of its
// next n publishes in order (replyOrder).
func reorderReplies(t *testing.T, j *Journal, n int, order []int) {
	t.Helper()
	r := &replyOrder{j: j, n0: n, order: order, lost: map[string]bool{}, held: map[int]*nats.Msg{}}
	if err := j.pub.sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	sub, err := j.nc.Subscribe(j.pub.inbox+"*", r.on)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		t.Fatal(err)
	}
	j.pub.sub = sub // closed with the journal
}

func (r *replyOrder) on(m *nats.Msg) {
	if r.lost[m.Subject] || r.n >= r.n0 {
		r.j.pub.onReply(m) // a retry's, or a later publish's
		return
	}
	i := r.n
	r.n++
	if !slices.Contains(r.order, i) {
		r.lost[m.Subject] = true
		return
	}
	r.held[i] = m
	for r.next < len(r.order) {
		m, ok := r.held[r.order[r.next]]
		if !ok {
			break
		}
		delete(r.held, r.order[r.next])
		r.next++
		r.j.pub.onReply(m)
	}
}

// answer is a publish's answer: the publish's index, and done's
// arguments.
type answer struct {
	i   int
	seq uint64
	err error
}

// TestSoleWriterAnswersEveryAcknowledgment: publishes in flight at once,
// some with the same Msg-Id of the caller's (JetStream stores the first
// and acknowledges the others at its sequence, as duplicates), whose
// acknowledgments come in another order (a lost one is retried) or past
// another writer's message: every caller gets its answer once, at the
// sequence its message (or its Msg-Id's first) is stored at, and the
// stream and the store hold each message once, at that sequence.
func TestSoleWriterAnswersEveryAcknowledgment(t *testing.T) {
	type pub struct{ data, id string } // id "": the journal's own
	g := pub{"gap", ""}
	x := pub{"x", "order-17"}
	y := pub{"y", ""}
	for _, tc := range []struct {
		name  string
		pubs  []pub // published in this order, all in flight at once
		order []int // the order their first acknowledgments come in; one not in it is lost
		// other stores another writer's message first: a gap before
		// the publishes that no acknowledgment fills.
		other   bool
		gapWait time.Duration // Options.soleGapWait; default a minute: no fallback
		ackWait time.Duration // Options.AckWait; default its default
		// answers is the order the publishes are answered in, when the
		// sole writer decides it (nil: any order).
		answers   []int
		fallbacks uint64
	}{
		{name: "a caller's Msg-Id twice past a gap", pubs: []pub{g, x, x}, order: []int{1, 2, 0}, answers: []int{0, 1, 2}},
		{name: "a caller's Msg-Id three times past a gap", pubs: []pub{g, x, x, x}, order: []int{1, 2, 3, 0}, answers: []int{0, 1, 2, 3}},
		{name: "the duplicate's acknowledgment first, past a gap", pubs: []pub{g, x, x}, order: []int{2, 1, 0}, answers: []int{0, 2, 1}},
		{name: "a duplicate and another past a gap", pubs: []pub{g, x, x, y}, order: []int{1, 2, 3, 0}, answers: []int{0, 1, 2, 3}},
		{name: "a duplicate with no gap", pubs: []pub{x, x, y}, order: []int{0, 1, 2}, answers: []int{0, 1, 2}},
		{name: "the duplicate's acknowledgment first, no gap", pubs: []pub{x, x}, order: []int{1, 0}, answers: []int{1, 0}},
		{name: "a duplicate of an applied sequence, then a gap", pubs: []pub{x, g, x, y}, order: []int{0, 3, 2, 1}, answers: []int{0, 2, 1, 3}},
		{
			name: "a lost acknowledgment, whose retry's fills the gap before duplicates",
			pubs: []pub{g, x, x}, order: []int{1, 2}, ackWait: 200 * time.Millisecond, answers: []int{0, 1, 2},
		},
		{
			name: "a lost acknowledgment, whose retry's comes after the consumer applied it",
			pubs: []pub{g, y}, order: []int{1}, gapWait: time.Millisecond, ackWait: time.Second,
			answers: []int{1, 0}, fallbacks: 1,
		},
		{
			name: "duplicates past another writer's message", pubs: []pub{x, x, y}, order: []int{0, 1, 2},
			other: true, gapWait: 50 * time.Millisecond, fallbacks: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := &Options{SoleWriter: true, soleGapWait: time.Minute, AckWait: tc.ackWait}
			if tc.gapWait > 0 {
				opts.soleGapWait = tc.gapWait
			}
			j, st := open(t, node(t, ""), opts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const key = "app\x00dup"
			var want []acked // the channel's messages, in the stream's order
			if tc.other {
				ack, err := j.js.Publish(ctx, Subject(key), []byte("not mine"))
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, acked{key, "not mine", ack.Sequence})
			}
			// The sequence each publish is to be answered with: its Msg-Id's first.
			seqs := make([]uint64, len(tc.pubs))
			first := map[string]uint64{}
			for i, p := range tc.pubs {
				if s, ok := first[p.id]; ok && p.id != "" {
					seqs[i] = s
					continue
				}
				seqs[i] = uint64(len(want) + 1)
				first[p.id] = seqs[i]
				want = append(want, acked{key, p.data, seqs[i]})
			}

			reorderReplies(t, j, len(tc.pubs), tc.order)
			answers := make(chan answer, 2*len(tc.pubs))
			var mu sync.Mutex
			calls := make([]int, len(tc.pubs))
			for i, p := range tc.pubs {
				j.PublishID(key, []byte(p.data), p.id, func(seq uint64, err error) {
					mu.Lock()
					calls[i]++
					mu.Unlock()
					answers <- answer{i, seq, err}
				})
			}
			var got []int
			for range tc.pubs {
				select {
				case a := <-answers:
					if a.err != nil || a.seq != seqs[a.i] {
						t.Errorf("publish %d (%q, Msg-Id %q) answered %d, %v; want %d", a.i, tc.pubs[a.i].data, tc.pubs[a.i].id, a.seq, a.err, seqs[a.i])
					}
					got = append(got, a.i)
				case <-ctx.Done():
					t.Fatalf("publishes answered: %v; the others never were (%+v)", got, j.Stats())
				}
			}
			if tc.answers != nil && !slices.Equal(got, tc.answers) {
				t.Errorf("publishes answered in the order %v, want %v", got, tc.answers)
			}

			// A later publish is answered after anything the feed had
			// left to say about the earlier ones.
			last := publish(t, j, key, "last")
			want = append(want, acked{key, "last", last})
			mu.Lock()
			for i, n := range calls {
				if n != 1 {
					t.Errorf("publish %d answered %d times", i, n)
				}
			}
			mu.Unlock()
			holds(t, j, st, want)
			fs, _, err := j.Next(ctx, key, 1, 100, 0)
			if err != nil || len(fs) != len(want) {
				t.Fatalf("the stream holds %d messages of the channel (%v), want %d: %v", len(fs), err, len(want), fs)
			}
			if s := j.Stats(); s.SoleFallbacks != tc.fallbacks || s.Lag != 0 {
				t.Errorf("stats %+v: want %d fallbacks, no lag", s, tc.fallbacks)
			}
		})
	}
}

// storedAfterFallback opens a sole writer (with opts, nil for none, and
// no watchdog tick: nothing but the test and the gap check moves the
// feed), stores data at key with Msg-Id id straight into the stream, and
// leaves the feed as after a fallback, before the consumer came: what
// waits now waits for the consumer.
func storedAfterFallback(t *testing.T, opts *Options, key, id, data string) (*Journal, *store.Store, *jetstream.PubAck) {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.SoleWriter, o.watchEvery = true, time.Hour
	j, st := open(t, node(t, ""), &o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ack, err := j.js.Publish(ctx, Subject(key), []byte(data), jetstream.WithMsgID(id))
	if err != nil {
		t.Fatal(err)
	}
	j.feed.applyMu.Lock()
	j.feed.leaveSoleLocked()
	j.feed.applyMu.Unlock()
	return j, st, ack
}

// TestSoleWriterTakesOverDuplicateWaiters: acknowledgments that waited
// for the consumer, two at one sequence (a caller's Msg-Id published
// twice), are both answered once the feed, a sole writer again, appends
// that sequence.
func TestSoleWriterTakesOverDuplicateWaiters(t *testing.T) {
	t.Parallel()
	const key, id = "app\x00enter", "order-9"
	j, st, ack := storedAfterFallback(t, nil, key, id, "m")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &j.feed
	answers := make(chan answer, 4)
	for i := range 2 {
		// As the publisher hands over JetStream's two acknowledgments.
		f.acked(waiter{seq: ack.Sequence, id: idHash(id), deadline: time.Now().Add(time.Minute),
			subj: Subject(key), data: []byte("m"),
			done: func(seq uint64, err error) { answers <- answer{i, seq, err} }})
	}
	if s := j.Stats(); s.Lag != 2 {
		t.Fatalf("stats %+v: want the 2 acknowledgments waiting", s)
	}
	f.applyMu.Lock()
	f.enterSoleLocked() // the consumer caught up
	f.applyMu.Unlock()
	for range 2 {
		select {
		case a := <-answers:
			if a.err != nil || a.seq != ack.Sequence {
				t.Errorf("acknowledgment %d answered %d, %v; want %d", a.i, a.seq, a.err, ack.Sequence)
			}
		case <-ctx.Done():
			t.Fatalf("an acknowledgment was never answered (%+v)", j.Stats())
		}
	}
	select {
	case a := <-answers:
		t.Fatalf("acknowledgment %d answered again", a.i)
	default:
	}
	holds(t, j, st, []acked{{key, "m", ack.Sequence}})
}

// TestSoleWriterAcrossAReconnect: publishes in flight as the connection
// to the node drops, pairs of them with the same Msg-Id of the caller's,
// are each answered once (a pair at one sequence), whatever answers the
// drop lost and the retries brought again, and the stream and the store
// hold each message once.
func TestSoleWriterAcrossAReconnect(t *testing.T) {
	t.Parallel()
	n := node(t, "")
	j, st := open(t, n, &Options{SoleWriter: true, AckWait: 200 * time.Millisecond})
	const key, count = "app\x00reconnect", 400
	cid, err := j.nc.GetClientID()
	if err != nil {
		t.Fatal(err)
	}
	answers := make(chan answer, 2*count)
	ids := make([]string, count)
	for i := range count {
		if i == count/2 {
			if err := n.Server().DisconnectClientByID(cid); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 != 2 {
			ids[i] = fmt.Sprint("pair-", i/3) // i%3 = 0 and 1
		}
		j.PublishID(key, []byte(fmt.Sprint("m", i/3, "-", i%3/2)), ids[i], func(seq uint64, err error) { answers <- answer{i, seq, err} })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seqs := make([]uint64, count)
	for range count {
		select {
		case a := <-answers:
			if a.err != nil {
				t.Fatalf("publish %d: %v", a.i, a.err)
			}
			if seqs[a.i] != 0 {
				t.Fatalf("publish %d answered twice", a.i)
			}
			seqs[a.i] = a.seq
		case <-ctx.Done():
			t.Fatalf("publishes unanswered (%+v)", j.Stats())
		}
	}
	if s := j.Stats(); s.Reconnects == 0 {
		t.Fatalf("stats %+v: the connection never dropped", s)
	}
	var want []acked
	at := map[uint64]int{}
	for i, seq := range seqs {
		if i%3 == 1 {
			if seq != seqs[i-1] {
				t.Errorf("publishes %d and %d with Msg-Id %q answered %d and %d", i-1, i, ids[i], seqs[i-1], seq)
			}
			continue
		}
		if k, ok := at[seq]; ok {
			t.Errorf("publishes %d and %d both answered %d", k, i, seq)
		}
		at[seq] = i
		want = append(want, acked{key, fmt.Sprint("m", i/3, "-", i%3/2), seq})
	}
	slices.SortFunc(want, func(a, b acked) int { return cmp.Compare(a.seq, b.seq) })
	holds(t, j, st, want)
	fs, _, err := j.Next(ctx, key, 1, 2*count, 0)
	if err != nil || len(fs) != len(want) {
		t.Fatalf("the stream holds %d messages of the channel (%v), want %d", len(fs), err, len(want))
	}
}

// TestSoleWriterLeavesAwaitForTheLog: a waiter with no message of its
// own (Journal.Await's, for a conditional publish found stored after its
// refusal) that waited for the consumer is not taken for a publish to
// append when the feed becomes a sole writer again: the message it waits
// for reaches the store from the log, and Await returns once it has.
func TestSoleWriterLeavesAwaitForTheLog(t *testing.T) {
	t.Parallel()
	const key, id = "app\x00await", "cas-1"
	// The gap check alone falls back to the log.
	j, st, ack := storedAfterFallback(t, &Options{soleGapWait: 50 * time.Millisecond}, key, id, "stored")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &j.feed
	awaited := make(chan error, 1)
	go func() { awaited <- j.Await(ctx, ack.Sequence, id) }()
	poll.UntilNil(t, "Await's waiter", func() error {
		if s := j.Stats(); s.Lag != 1 {
			return fmt.Errorf("stats %+v: want 1 waiting", s)
		}
		return nil
	})
	f.applyMu.Lock()
	f.enterSoleLocked() // the consumer caught up
	f.applyMu.Unlock()
	// The sole writer's own next publish comes past the gap Await's
	// message leaves, which the log fills.
	next := publish(t, j, key, "next")
	select {
	case err := <-awaited:
		if err != nil {
			t.Fatalf("Await: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("Await never returned (%+v)", j.Stats())
	}
	holds(t, j, st, []acked{{key, "stored", ack.Sequence}, {key, "next", next}})
	if next != ack.Sequence+1 {
		t.Errorf("the next publish was stored at %d, want %d", next, ack.Sequence+1)
	}
}
