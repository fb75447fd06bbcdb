package journal

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// fateJournal is a journal with no NATS: its publisher is recovering, so
// a publish is held (never sent) until due says so, and the test hands it
// JetStream's answers.
func fateJournal() *Journal {
	o := (&Options{AckWait: time.Second, PublishTimeout: 5 * time.Second, Duplicates: 40 * time.Second,
		Logger: slog.New(slog.DiscardHandler)}).normalize()
	j := &Journal{opts: o, log: o.Logger, prefix: subjectPrefix, fence: fenceSubject(subjectPrefix)}
	j.pub.j = j
	j.pub.inbox = "_INBOX.test."
	j.pub.pending = make(map[uint64]*pubReq)
	j.pub.recovering = true // held: nothing sends before due
	j.pub.pause = retryPause
	return j
}

// outcomes records the calls of publishes' done functions.
type outcomes struct {
	mu   sync.Mutex
	errs map[string][]error
}

func (o *outcomes) done(name string) func(uint64, error) {
	return func(_ uint64, err error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.errs == nil {
			o.errs = make(map[string][]error)
		}
		o.errs[name] = append(o.errs[name], err)
	}
}

func (o *outcomes) of(name string) []error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.errs[name]
}

// sendAll marks every pending publish sent at t, as due's first round.
func sendAll(j *Journal, t time.Time) {
	j.pub.mu.Lock()
	defer j.pub.mu.Unlock()
	for _, r := range j.pub.pending {
		r.first, r.sent = t, t
		r.sends++
	}
	j.pub.recoverUntil = j.pub.next
}

// A publish sent and not answered by its deadline fails as fate
// unknown, not as not stored, and stays: the publisher goes on asking
// about it, holding a later publish, which fails as not stored once past
// its own deadline. Past the resolve window the publisher stops asking.
func TestFateUnknownHoldsLaterPublishes(t *testing.T) {
	j := fateJournal()
	var got outcomes
	j.publish("sluice.a", []byte("a"), "", "", pubExtra{}, got.done("a"))
	t0 := time.Now()
	sendAll(j, t0)
	timeout := j.opts.PublishTimeout
	if _, failed := j.pub.due(t0.Add(timeout + time.Millisecond)); len(failed) != 1 {
		t.Fatalf("past the deadline: %d failures, want 1", len(failed))
	} else {
		failed[0].r.done(0, failed[0].err)
	}
	errs := got.of("a")
	if len(errs) != 1 || !errors.Is(errs[0], ErrFateUnknown) || !errors.Is(errs[0], ErrUnavailable) || errors.Is(errs[0], ErrNotStored) {
		t.Fatalf("a sent publish past its deadline: %v, want one ErrFateUnknown", errs)
	}
	// A later publish, after the caller learned a's fate is unknown.
	j.publish("sluice.a", []byte("b"), "", "", pubExtra{}, got.done("b"))
	t1 := t0.Add(timeout + 2*time.Millisecond)
	for at := t1; at.Before(t1.Add(timeout)); at = at.Add(retryPause) {
		resend, failed := j.pub.due(at)
		for _, r := range resend {
			if string(r.msg.Data) != "a" {
				t.Fatalf("at %v: %q sent while a's fate is unknown", at.Sub(t0), r.msg.Data)
			}
		}
		for _, f := range failed {
			f.r.done(0, f.err)
		}
	}
	if errs := got.of("b"); len(errs) != 1 || !errors.Is(errs[0], ErrNotStored) {
		t.Fatalf("a publish held past its deadline: %v, want ErrNotStored", errs)
	}
	if !j.pub.recovering || len(j.pub.pending) != 1 {
		t.Fatalf("recovering %v with %d pending, want a asked about still", j.pub.recovering, len(j.pub.pending))
	}
	j.pub.due(t0.Add(j.opts.resolveWindow()))
	if len(j.pub.pending) != 0 || j.pub.recovering || j.counters.abandoned.Load() != 1 {
		t.Fatalf("past the resolve window: %d pending, recovering %v, want none", len(j.pub.pending), j.pub.recovering)
	}
	if errs := got.of("a"); len(errs) != 1 {
		t.Fatalf("a answered %d times, want once", len(errs))
	}
}

// JetStream's "duplicate message id is in process" (10158) is no
// answer: the publish stays pending, its caller waits, and the
// publisher asks again. A refusal is an answer: not stored.
func TestInProcessIsNoAnswer(t *testing.T) {
	tests := []struct {
		name      string
		reply     string
		answered  bool
		notStored bool
	}{
		{"in process", `{"error":{"code":409,"err_code":10158,"description":"duplicate message id is in process"},"stream":"SLUICE","seq":0}`, false, false},
		{"no leader", `{"error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}}`, false, false},
		{"refused", `{"error":{"code":400,"err_code":10054,"description":"maximum messages exceeded"},"stream":"SLUICE","seq":0}`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := fateJournal()
			var got outcomes
			j.publish("sluice.a", []byte("a"), "", "", pubExtra{}, got.done("a"))
			sendAll(j, time.Now())
			j.pub.onSlowReply(1, []byte(tt.reply))
			errs := got.of("a")
			if tt.answered != (len(errs) == 1) {
				t.Fatalf("after %s: answers %v, want answered %v", tt.reply, errs, tt.answered)
			}
			if tt.answered && errors.Is(errs[0], ErrNotStored) != tt.notStored {
				t.Fatalf("after %s: %v, want not stored %v", tt.reply, errs[0], tt.notStored)
			}
			if !tt.answered && (len(j.pub.pending) != 1 || !j.pub.recovering) {
				t.Fatalf("after %s: %d pending, recovering %v; want it asked again", tt.reply, len(j.pub.pending), j.pub.recovering)
			}
		})
	}
}

// A publish whose caller was told its fate is unknown is answered once:
// JetStream's later refusal ends the asking and calls nobody.
func TestLateAnswerCallsNobody(t *testing.T) {
	j := fateJournal()
	var got outcomes
	j.publish("sluice.a", []byte("a"), "", "", pubExtra{}, got.done("a"))
	t0 := time.Now()
	sendAll(j, t0)
	_, failed := j.pub.due(t0.Add(j.opts.PublishTimeout + time.Millisecond))
	for _, f := range failed {
		f.r.done(0, f.err)
	}
	j.pub.onSlowReply(1, []byte(`{"error":{"code":400,"err_code":10054,"description":"maximum messages exceeded"}}`))
	if errs := got.of("a"); len(errs) != 1 || len(j.pub.pending) != 0 || j.counters.resolved.Load() != 1 {
		t.Fatalf("answers %v, %d pending, resolved %d; want one answer, none pending, one resolved",
			errs, len(j.pub.pending), j.counters.resolved.Load())
	}
}

// The pause between a recovery's rounds doubles while nothing answers,
// up to maxRetryPause, and each round sends in publish order.
func TestRecoveryBacksOff(t *testing.T) {
	j := fateJournal()
	for i := range 3 {
		j.publish("sluice.a", fmt.Appendf(nil, "%d", i), "", "", pubExtra{}, func(uint64, error) {})
	}
	t0 := time.Now()
	sendAll(j, t0)
	var rounds []time.Duration
	for at := t0; at.Before(t0.Add(4 * time.Second)); at = at.Add(50 * time.Millisecond) {
		resend, _ := j.pub.due(at)
		if len(resend) == 0 {
			continue
		}
		rounds = append(rounds, at.Sub(t0))
		for k, r := range resend {
			if want := fmt.Sprint(k); string(r.msg.Data) != want {
				t.Fatalf("round at %v sends %q at %d, want %q", at.Sub(t0), r.msg.Data, k, want)
			}
		}
	}
	want := []time.Duration{100, 300, 700, 1500, 3100}
	if len(rounds) != len(want) {
		t.Fatalf("rounds at %v, want at %v ms", rounds, want)
	}
	for k, w := range want {
		if rounds[k] != w*time.Millisecond {
			t.Fatalf("rounds at %v, want at %v ms", rounds, want)
		}
	}
}

// A publish none of whose sends the NATS connection took never left the
// edge: past its deadline it is not stored, for sure.
func TestNeverSentIsNotStored(t *testing.T) {
	n := node(t, "")
	j, _ := open(t, n, &Options{AckWait: 100 * time.Millisecond, PublishTimeout: 500 * time.Millisecond})
	j.nc.Close()
	c := make(chan error, 1)
	j.Publish("demo\x00a", []byte("lost"), func(_ uint64, err error) { c <- err })
	select {
	case err := <-c:
		if !errors.Is(err, ErrNotStored) || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("publish on a closed connection: err = %v, want ErrNotStored", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("publish on a closed connection: no answer")
	}
}
