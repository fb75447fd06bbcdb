package journal

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/internal/poll"
)

func TestSwitchHeaderRoundTrip(t *testing.T) {
	for _, sw := range []deadSwitch{{ttl: 1, message: []byte(`"dead"`)}, {ttl: 86400, message: []byte{0x81, 0xa1, 'a', 0xc0, '\n', ' '}}, {ttl: 7}} {
		h := nats.Header{}
		sw.set(h)
		ttl, msg, ok := parseSwitch(h.Get(SwitchHeader))
		if !ok || ttl != sw.ttl || !bytes.Equal(msg, sw.message) {
			t.Errorf("switch %+v came back as %d %q %v", sw, ttl, msg, ok)
		}
	}
	if armed(0, []byte("x")) != nil {
		t.Error("a ttl of 0 armed a switch")
	}
	for _, v := range []string{"", "5", "x AAAA", "0 AAAA", "-1 AAAA", "5 !!!", "5  AAAA", "604801 AAAA", "99999999999999 AAAA"} {
		if ttl, msg, ok := parseSwitch(v); ok {
			t.Errorf("parseSwitch(%q) = %d %q, want refused", v, ttl, msg)
		}
	}
}

// FuzzParseSwitch: what the feed reads as a switch, written by the
// publisher, reads back the same (the writer's form is canonical; the
// reader takes the non-canonical ones too, as "01" for 1), and no value
// makes it panic.
func FuzzParseSwitch(f *testing.F) {
	for _, s := range []string{"1 ImRlYWQi", "86400 ", "3 gaFhwA==", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ttl, msg, ok := parseSwitch(v)
		if !ok {
			return
		}
		h := nats.Header{}
		(&deadSwitch{ttl: ttl, message: msg}).set(h)
		ttl2, msg2, ok := parseSwitch(h.Get(SwitchHeader))
		if !ok || ttl2 != ttl || !bytes.Equal(msg2, msg) {
			t.Fatalf("parseSwitch(%q) = %d %q, written as %q, read back as %d %q %v", v, ttl, msg, h.Get(SwitchHeader), ttl2, msg2, ok)
		}
	})
}

// TestRecoverSwitches: a journal restarted with nothing in its replay
// announces, as replayed, the switch of every channel whose last message
// arms one, with that message's sequence: not a switch a later message
// followed or replaced, not one of a purged channel; more channels than
// one fetch takes, and the scan's consumer goes when it is done.
func TestRecoverSwitches(t *testing.T) {
	n := node(t, "")
	j, _ := open(t, n, nil)
	arm := func(key string, ttl int64) uint64 {
		t.Helper()
		seq, err := answerOf(t, "arm "+key, func(done func(uint64, error)) {
			j.PublishArming(context.Background(), key, []byte(`"alive"`), "", ttl, []byte(`"dead"`), done)
		})
		if err != nil {
			t.Fatalf("arm %q: %v", key, err)
		}
		return seq
	}
	want := map[string]uint64{"app\x00held": arm("app\x00held", 30)}
	arm("app\x00followed", 30)
	publish(t, j, "app\x00followed", "after")
	arm("app\x00replaced", 30)
	want["app\x00replaced"] = arm("app\x00replaced", 40)
	purged := arm("app\x00purged", 30)
	if _, err := purge(t, j, "app\x00purged", purged); err != nil {
		t.Fatal(err)
	}
	publish(t, j, "app\x00plain", "no switch")
	// More channels than one fetch asks for, every third armed.
	for i := range 2 * scanBatch {
		key := fmt.Sprintf("app\x00many%d", i)
		if i%3 == 0 {
			want[key] = arm(key, 60)
		} else {
			publish(t, j, key, "plain")
		}
	}
	// The channels' last messages come oldest first: this one's
	// announcement is the scan's last.
	last := arm("app\x00last", 50)
	want["app\x00last"] = last
	j.Close()

	// An edge that starts: on the ordered feed after its replay, on the
	// interest feed from the stream's newest message (it replays
	// nothing).
	for _, interest := range []bool{false, true} {
		t.Run(fmt.Sprintf("interest=%v", interest), func(t *testing.T) {
			checkRecovered(t, n, &Options{Replay: time.Millisecond, Interest: interest}, want)
		})
	}
}

// checkRecovered starts a journal with opts on n and checks that it
// announces, as replayed, the switches of want (key: the arming message's
// sequence) and no other, and deletes the scan's consumer.
func checkRecovered(t *testing.T, n *Node, opts *Options, want map[string]uint64) {
	type announced struct {
		offset   uint64
		ttl      int64
		message  string
		replayed bool
	}
	var mu sync.Mutex
	got := map[string][]announced{}
	nc, err := n.Connect(t.Name() + "-again")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts.Logger = slog.New(slog.DiscardHandler)
	again, err := Open(ctx, nc, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	again.OnSwitch(func(key string, offset uint64, stored time.Time, ttl int64, message []byte, replayed bool) {
		mu.Lock()
		defer mu.Unlock()
		got[key] = append(got[key], announced{offset, ttl, string(message), replayed})
	})
	st := store.New(&store.Options{Epoch: again.Epoch()})
	defer st.Close()
	if err := again.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the last channel's switch announced", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got["app\x00last"]) > 0
	})
	mu.Lock()
	if len(got) != len(want) {
		t.Errorf("announced %v; want the switches of %v only", got, want)
	}
	for key, seq := range want {
		ttl, ok := map[string]int64{"app\x00held": 30, "app\x00replaced": 40, "app\x00last": 50}[key]
		if !ok {
			ttl = 60
		}
		if a := got[key]; len(a) != 1 || a[0] != (announced{seq, ttl, `"dead"`, true}) {
			t.Errorf("%q: announced %+v; want once, at %d, ttl %d, replayed", key, a, seq, ttl)
		}
	}
	mu.Unlock()
	poll.Until(t, "the scan's consumer deleted", func() bool {
		l, scanning := again.stream.ListConsumers(ctx), false
		for ci := range l.Info() { // to the end: the lister's goroutine sends them all
			scanning = scanning || ci.Config.HeadersOnly
		}
		return l.Err() == nil && !scanning
	})
}
