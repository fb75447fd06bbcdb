package journal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
)

// fenceAnswer is what a publish's done function got.
type fenceAnswer struct {
	seq uint64
	err error
}

// answerChan returns a done function and the channel it sends to.
func answerChan() (func(uint64, error), chan fenceAnswer) {
	c := make(chan fenceAnswer, 1)
	return func(seq uint64, err error) { c <- fenceAnswer{seq, err} }, c
}

// await returns the answer c gets, failing t after 30 s.
func await(t *testing.T, what string, c chan fenceAnswer) fenceAnswer {
	t.Helper()
	select {
	case a := <-c:
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer in 30 s", what)
		return fenceAnswer{}
	}
}

// A publish that must be sent again after a later publish of the edge
// was stored is fenced, never sent again: JetStream stores the fence
// (the publish fails as not stored, and never lands after the later
// one) or answers that the Msg-Id was stored (the publish is stored,
// before the later one). With nothing stored after it, it is sent again.
// Every feed skips the fence: the store holds what the log's channel
// holds, and later publishes go on at the next sequences.
func TestFenceKeepsOrder(t *testing.T) {
	tests := []struct {
		name string
		// first is what becomes of p1's first send: "lost" (it goes
		// nowhere) or "deaf" (stored, its answer lost).
		first string
		// later says p2 is published (and stored) before p1's retry.
		later bool
		// deafFence loses the answer to p1's first fence (stored): the
		// second fence's "duplicate" is asked of the stream's leader.
		deafFence bool
		// lateResend sends p1's message again just after its first
		// fence, as a retry delayed in the network: JetStream answers it
		// "duplicate" at the fence's sequence, which must not be taken
		// for the message's.
		lateResend bool
		wantStored bool
	}{
		{name: "lost, a later one stored", first: "lost", later: true},
		{name: "lost, a later one stored, first fence unanswered", first: "lost", later: true, deafFence: true},
		{name: "lost, a later one stored, a late resend after the fence", first: "lost", later: true, deafFence: true, lateResend: true},
		{name: "stored unanswered, a later one stored", first: "deaf", later: true, wantStored: true},
		{name: "lost, nothing later", first: "lost", wantStored: true},
	}
	for _, tt := range tests {
		for _, sole := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sole=%v", tt.name, sole), func(t *testing.T) {
				t.Parallel()
				// AckWait is long: the test starts the retry itself,
				// once p2 is stored.
				j, st := open(t, node(t, ""), &Options{AckWait: time.Minute, SoleWriter: sole})
				const key = "demo\x00ch"
				var firstGone, fenceGone atomic.Bool
				var first atomic.Pointer[nats.Msg]
				nowhere := "_INBOX.nowhere"
				j.pub.mu.Lock()
				j.pub.sendHook = func(m *nats.Msg) error {
					switch {
					case m.Header.Get(msgIDHeader) != "p1":
					case unpartitioned.isFence(m.Subject):
						if tt.deafFence && fenceGone.CompareAndSwap(false, true) {
							c := *m
							c.Reply = nowhere
							err := j.nc.PublishMsg(&c)
							if tt.lateResend {
								err = errors.Join(err, j.nc.PublishMsg(first.Load()))
							}
							return err
						}
					case firstGone.CompareAndSwap(false, true):
						// A copy: its request's buffers are reused.
						first.Store(&nats.Msg{Subject: m.Subject, Reply: m.Reply,
							Header: nats.Header{msgIDHeader: []string{"p1"}}, Data: append([]byte(nil), m.Data...)})
						if tt.first == "lost" {
							return nil
						}
						c := *m
						c.Reply = nowhere
						return j.nc.PublishMsg(&c)
					}
					return j.nc.PublishMsg(m)
				}
				j.pub.mu.Unlock()

				done1, c1 := answerChan()
				j.PublishID(key, []byte("one"), "p1", done1)
				var a2 fenceAnswer
				if tt.later {
					done2, c2 := answerChan()
					j.PublishID(key, []byte("two"), "p2", done2)
					if a2 = await(t, "p2", c2); a2.err != nil {
						t.Fatalf("p2: %v", a2.err)
					}
				} else if tt.first == "deaf" {
					t.Fatal("a deaf first send needs a later publish to wait for")
				}
				j.pub.recover()
				a1 := await(t, "p1", c1)

				ctx := context.Background()
				var want []string
				switch {
				case !tt.wantStored:
					if !errors.Is(a1.err, ErrNotStored) {
						t.Fatalf("p1 = %d, %v; want ErrNotStored", a1.seq, a1.err)
					}
					want = []string{"two"}
					if got := j.Stats().Fenced; got != 1 {
						t.Errorf("Stats().Fenced = %d, want 1", got)
					}
				case a1.err != nil:
					t.Fatalf("p1: %v; want it stored", a1.err)
				case tt.later && a1.seq >= a2.seq:
					t.Fatalf("p1 stored at %d, after p2 at %d", a1.seq, a2.seq)
				case tt.later:
					want = []string{"one", "two"}
				default:
					want = []string{"one"}
				}

				// A later publish goes on, after the fence if there is one.
				s3 := publish(t, j, key, "three")
				want = append(want, "three")
				fs, _, err := j.Next(ctx, key, 0, 10, 0)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, f := range fs {
					got = append(got, string(f.Data))
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("the log's channel holds %q, want %q", got, want)
				}
				if !tt.wantStored {
					subj, found, err := j.subjectAt(ctx, s3-1)
					if err != nil || !found || !unpartitioned.isFence(subj) {
						t.Fatalf("at %d the log holds %q (%v, %v), want the fence", s3-1, subj, found, err)
					}
				}
				// The store holds what the log does, the fence skipped.
				poll.Within(t, 10*time.Second, "the store to apply p3", func() bool { return st.Applied(0) >= s3 })
				from := fs[0].Offset
				for _, f := range fs {
					g, found, err := st.Read(key, &rtm.Position{Epoch: j.Epoch(), Offset: from})
					if err != nil || !found || g.Offset != f.Offset || string(g.Data) != string(f.Data) {
						t.Fatalf("store from %d: %q at %d (%v, %v), want %q at %d",
							from, g.Data, g.Offset, found, err, f.Data, f.Offset)
					}
					from = g.Offset + 1
				}
				if g, found, err := st.Read(key, &rtm.Position{Epoch: j.Epoch(), Offset: from}); found || err != nil {
					t.Fatalf("store from %d: %q at %d (%v); want nothing more", from, g.Data, g.Offset, err)
				}
				if n := j.Stats().Reordered; n != 0 {
					t.Errorf("Stats().Reordered = %d, want 0", n)
				}
				if sole && !tt.wantStored && tt.first == "lost" && !tt.deafFence {
					if n := j.Stats().SoleFallbacks; n != 0 {
						t.Errorf("the sole writer fell back to the consumer %d times over a fence", n)
					}
				}
			})
		}
	}
}

// How a publish is sent again depends on what became of it and of the
// publishes after it: its message if none after it was stored, else its
// fence, or, if it never left the edge, nothing (it fails as not stored).
func TestFenceOrResend(t *testing.T) {
	tests := []struct {
		name        string
		laterStored bool
		neverLeft   bool
		want        string // "message", "fence" or "not stored"
	}{
		{name: "nothing later stored", want: "message"},
		{name: "nothing later stored, never left", neverLeft: true, want: "message"},
		{name: "a later one stored", laterStored: true, want: "fence"},
		{name: "a later one stored, never left", laterStored: true, neverLeft: true, want: "not stored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := fateJournal()
			var got outcomes
			j.publish("sluice.a.b", []byte("a"), "", "", pubExtra{}, got.done("a"))
			j.publish("sluice.a.b", []byte("b"), "", "", pubExtra{}, got.done("b"))
			t0 := time.Now()
			sendAll(j, t0)
			j.pub.mu.Lock()
			a := j.pub.pending[1]
			if tt.neverLeft {
				a.unsent = a.sends
			}
			j.pub.mu.Unlock()
			if tt.laterStored && !j.pub.take(2, 7) {
				t.Fatal("b was not pending")
			}
			resend, failed := j.pub.due(t0.Add(time.Second))
			var what string
			switch {
			case len(failed) == 1 && failed[0].r == a && len(resend) <= 1:
				if !errors.Is(failed[0].err, ErrNotStored) {
					t.Fatalf("a failed with %v, want ErrNotStored", failed[0].err)
				}
				what = "not stored"
			case len(failed) > 0 || len(resend) == 0 || resend[0].tok != 1:
				t.Fatalf("due: resend %v, failed %v; want a first", resend, failed)
			case resend[0].msg == &a.msg:
				what = "message"
			case unpartitioned.isFence(resend[0].msg.Subject) && resend[0].msg.Header.Get(msgIDHeader) == a.msg.Header.Get(msgIDHeader) &&
				len(resend[0].msg.Data) == 0:
				what = "fence"
			default:
				t.Fatalf("a sent again as %+v", resend[0].msg)
			}
			if what != tt.want {
				t.Fatalf("a is sent again as %q, want %q", what, tt.want)
			}
		})
	}
}

// No channel's subject, nor a purge marker's, is the fences' subject.
func TestFenceSubjectIsNoChannel(t *testing.T) {
	if _, ok := unpartitioned.keyOf(unpartitioned.fence); ok {
		t.Fatalf("unpartitioned.keyOf(%q) is a channel", unpartitioned.fence)
	}
	if _, ok := unpartitioned.purgeKeyOf(unpartitioned.fence); ok {
		t.Fatalf("unpartitioned.purgeKeyOf(%q) is a channel", unpartitioned.fence)
	}
	for _, key := range []string{"\x00", "$\x00fence", "a\x00", "\x00$fence"} {
		if s := Subject(key); unpartitioned.isFence(s) || unpartitioned.isFence(unpartitioned.purgeSubject(key)) {
			t.Fatalf("Subject(%q) = %q, the fences'", key, s)
		}
	}
}

// A publish acknowledged at a sequence past that of one sent after it
// is counted, whichever of the two is acknowledged first: the window
// that fences leave is seen, never silent.
func TestReorderedIsCounted(t *testing.T) {
	t.Parallel()
	j := fateJournal()
	var got outcomes
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		j.publish("sluice.a.b", []byte(name), "", "", pubExtra{}, got.done(name))
	}
	sendAll(j, time.Now())
	for _, ack := range []struct{ tok, seq, want uint64 }{
		{tok: 2, seq: 10, want: 0},
		{tok: 1, seq: 11, want: 1}, // a after b
		{tok: 4, seq: 13, want: 1},
		{tok: 3, seq: 12, want: 1}, // c before d: in order
		{tok: 5, seq: 15, want: 1},
		{tok: 6, seq: 14, want: 2}, // e after f, e acknowledged first
	} {
		if !j.pub.take(ack.tok, ack.seq) {
			t.Fatalf("publish %d was not pending", ack.tok)
		}
		if n := j.counters.reordered.Load(); n != ack.want {
			t.Fatalf("after %d at %d: %d reordered, want %d", ack.tok, ack.seq, n, ack.want)
		}
	}
}

// A publish with its caller's Msg-Id that JetStream answers as a
// duplicate gets the sequence of the message first stored with it, long
// before perhaps, or by another edge: that is a retry, not a reorder.
func TestReorderedIgnoresCallersDuplicates(t *testing.T) {
	t.Parallel()
	j := fateJournal()
	var got outcomes
	for i, id := range []string{"client-1", "", "client-1", ""} {
		j.publish("sluice.a.b", []byte{byte(i)}, id, "", pubExtra{}, got.done(strconv.Itoa(i)))
	}
	sendAll(j, time.Now())
	for _, ack := range []struct{ tok, seq uint64 }{{1, 10}, {2, 11}, {3, 10}, {4, 12}} {
		if !j.pub.take(ack.tok, ack.seq) {
			t.Fatalf("publish %d was not pending", ack.tok)
		}
	}
	if n := j.counters.reordered.Load(); n != 0 {
		t.Fatalf("%d reordered, want 0: the second client-1 is a duplicate", n)
	}
}
