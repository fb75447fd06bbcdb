package journal

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/store"
)

// publishExpect publishes conditionally, with Msg-Id id and origin (""
// for none), and waits for the answer.
func publishExpect(t *testing.T, j *Journal, key, data, id, origin string, last uint64) (uint64, error) {
	t.Helper()
	return answerOf(t, "publish "+data, func(done func(uint64, error)) {
		j.PublishExpect(context.Background(), key, []byte(data), id, origin, last, 0, nil, done)
	})
}

// TestPublishExpect: a conditional publish is stored only while the
// channel's newest message is at the sequence it expects (0: none), and
// is refused with a MismatchError naming the newest one otherwise; other
// channels' messages do not count. Latest reads the newest message, with
// its Msg-Id, from the leader; the store holds what was stored.
func TestPublishExpect(t *testing.T) {
	j, st := open(t, node(t, ""), nil)
	const key, other = "app\x00kv", "app\x00other"
	s1, err := publishExpect(t, j, key, "a", "id-a", "", 0)
	if err != nil {
		t.Fatalf("on an empty channel, expecting none: %v", err)
	}
	_, err = publishExpect(t, j, key, "b", "id-b", "", 0)
	var me *MismatchError
	if !errors.As(err, &me) || !errors.Is(err, store.ErrMismatch) || me.Last != s1 {
		t.Fatalf("expecting none on a channel at %d: %v, want a MismatchError at %d", s1, err, s1)
	}
	if at, resent := me.Resent(); resent || at != s1 {
		t.Fatalf("Resent() = %d, %v; want %d, false (sent once)", at, resent, s1)
	}
	publish(t, j, other, "x") // the stream moves on, the channel does not
	s2, err := publishExpect(t, j, key, "c", "id-c", "", s1)
	if err != nil || s2 <= s1 {
		t.Fatalf("expecting %d: %d, %v", s1, s2, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, id, found, err := j.Latest(ctx, key, 0)
	if err != nil || !found || f.Offset != s2 || string(f.Data) != "c" || id != "id-c" {
		t.Fatalf("Latest = %+v %q %v %v, want c at %d with id-c", f, id, found, err, s2)
	}
	if f, id, found, err := j.Latest(ctx, key, s1); err != nil || !found || string(f.Data) != "a" || id != "id-a" {
		t.Fatalf("Latest at %d = %+v %q %v %v, want a with id-a", s1, f, id, found, err)
	}
	if _, _, found, err := j.Latest(ctx, key, s1+1); err != nil || found {
		t.Fatalf("Latest at %d (another channel's) = %v %v, want not found", s1+1, found, err)
	}
	if _, _, found, err := j.Latest(ctx, "app\x00none", 0); err != nil || found {
		t.Fatalf("Latest of an empty channel = %v %v, want not found", found, err)
	}
	if err := j.Await(ctx, s2, "id-c"); err != nil {
		t.Fatalf("Await(%d): %v", s2, err)
	}
	if got, ok, _ := st.Read(key, nil); !ok || string(got.Data) != "c" || got.Offset != s2 {
		t.Fatalf("store after the writes: %+v %v, want c at %d", got, ok, s2)
	}
}

// TestSingleNodeChecksExpectedBeforeMsgID documents why a conditional
// publish sent again needs MismatchError.Resent: a single JetStream node
// refuses the second send of a stored conditional publish (same Msg-Id)
// as a wrong last sequence, naming the first send's, instead of
// answering it as a duplicate.
func TestSingleNodeChecksExpectedBeforeMsgID(t *testing.T) {
	j, _ := open(t, node(t, ""), nil)
	const key = "app\x00kv"
	s1, err := publishExpect(t, j, key, "a", "once", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(Subject(key))
	m.Header.Set("Nats-Msg-Id", "once")
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	m.Data = []byte("a")
	reply, err := j.nc.RequestMsg(m, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ack pubAck
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		t.Fatal(err)
	}
	if ack.Error == nil || ack.Error.ErrCode != errCodeWrongLast ||
		ack.Error.Description != "wrong last sequence: "+strconv.FormatUint(s1, 10) {
		t.Fatalf("the second send answered %s; want wrong last sequence: %d (if JetStream now answers a duplicate, Resent is no longer needed)", reply.Data, s1)
	}
}

// purge purges synchronously.
func purge(t *testing.T, j *Journal, key string, through uint64) (uint64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return answerOf(t, "purge", func(done func(uint64, error)) { j.Purge(ctx, key, through, "", done) })
}

// TestPurge: a purge drops the channel's messages from the stream and
// the store (not another channel's), takes a sequence of its own, says
// how far it purged (PurgedThrough), and is refused with a MismatchError,
// purging nothing more from the store, when a message came after the one
// it expects to be the newest.
func TestPurge(t *testing.T) {
	j, st := open(t, node(t, ""), nil)
	const key, other = "app\x00h", "app\x00other"
	publish(t, j, key, "a")
	s2 := publish(t, j, key, "b")
	publish(t, j, other, "x")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := j.PurgedThrough(ctx, key); err != nil || n != 0 {
		t.Fatalf("PurgedThrough before a purge = %d, %v; want 0", n, err)
	}
	ps, err := purge(t, j, key, s2)
	if err != nil || ps <= s2 {
		t.Fatalf("purge through %d: %d, %v", s2, ps, err)
	}
	if _, _, found, err := j.Latest(ctx, key, 0); err != nil || found {
		t.Fatalf("the stream after the purge: found %v, %v; want nothing", found, err)
	}
	if _, ok, _ := st.Read(key, nil); ok {
		t.Fatal("the store holds a message of the purged channel")
	}
	if f, ok, _ := st.Read(other, nil); !ok || string(f.Data) != "x" {
		t.Fatalf("the other channel: %+v %v, want x", f, ok)
	}
	if n, err := j.PurgedThrough(ctx, key); err != nil || n != s2 {
		t.Fatalf("PurgedThrough = %d, %v; want %d", n, err, s2)
	}
	s4 := publish(t, j, key, "c")
	if s4 <= ps {
		t.Fatalf("a message after the purge at %d, not after the purge's %d", s4, ps)
	}
	if _, err := purge(t, j, key, s2); !errors.Is(err, store.ErrMismatch) {
		t.Fatalf("purge through %d with %d after it: %v, want a mismatch", s2, s4, err)
	}
	if f, ok, _ := st.Read(key, nil); !ok || string(f.Data) != "c" || f.Offset != s4 {
		t.Fatalf("after the refused purge the store holds %+v %v, want c at %d", f, ok, s4)
	}
}
