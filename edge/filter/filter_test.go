package filter

import (
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// frames stores msgs as a channel's frames from offset 1, in every codec.
func frames(t *testing.T, msgs ...any) []store.Frame {
	t.Helper()
	fs := make([]store.Frame, len(msgs))
	for i, m := range msgs {
		p, _, err := payload.Encode(nil, m, payload.Carrier, payload.AllCodecs)
		if err != nil {
			t.Fatal(err)
		}
		fs[i] = store.Frame{Offset: uint64(i + 1), Time: int64(i + 1), Data: p}
	}
	return fs
}

func compile(t *testing.T, statement string) *View {
	t.Helper()
	sv, _, err := Compile(&rtm.SubscribeBody{SubscriptionID: "s", Filter: statement})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sv.Stop)
	return sv
}

// TestCompileRefuses answers what a subscribe may not ask with the
// protocol's codes.
func TestCompileRefuses(t *testing.T) {
	tests := []struct {
		name string
		body rtm.SubscribeBody
		code rtm.Code
	}{
		{"no subscription id", rtm.SubscribeBody{Filter: "SELECT * FROM a"}, rtm.CodeInvalidFormat},
		{"not SQL", rtm.SubscribeBody{SubscriptionID: "s", Filter: "SELECT FROM"}, rtm.CodeInvalidFilter},
		{"another channel", rtm.SubscribeBody{SubscriptionID: "s", Channel: "b", Filter: "SELECT * FROM a"}, rtm.CodeInvalidFilter},
		{"period too long", rtm.SubscribeBody{SubscriptionID: "s", Filter: "SELECT COUNT(*) FROM a", Period: 3600}, rtm.CodeInvalidFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Compile(&tt.body)
			if e, ok := rtm.AsError(err); !ok || e.Code != tt.code {
				t.Fatalf("Compile: %v, want %s", err, tt.code)
			}
		})
	}
}

// TestSharedResults: two subscriptions of one statement on one channel
// share one set of results, and each gets exactly what the view makes.
func TestSharedResults(t *testing.T) {
	var vs Shares
	const statement = "SELECT n * 2 AS d FROM a WHERE n > 1"
	fs := frames(t, map[string]any{"n": int64(1)}, map[string]any{"n": int64(2)}, map[string]any{"n": int64(3)})
	var got [2][][]byte
	for i := range got {
		sv := compile(t, statement)
		sv.Join(&vs, "app\x00a", statement)
		defer sv.Leave()
		var err error
		if got[i], err = sv.Messages(nil, fs, payload.JSON, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := vs.Len(); n != 1 {
		t.Fatalf("%d shares for one statement, want 1", n)
	}
	for i, msgs := range got {
		if len(msgs) != 2 || string(msgs[0]) != `{"d":4}` || string(msgs[1]) != `{"d":6}` {
			t.Fatalf("subscription %d got %q, want the two doubled", i, msgs)
		}
	}
}

// TestAggregatePeriod: an aggregate view counts what it reads into the
// period under way, which a subscription resumes at, and sends it once
// the period is due.
func TestAggregatePeriod(t *testing.T) {
	sv := compile(t, "SELECT COUNT(*) AS n FROM a")
	if sv.Due() {
		t.Fatal("due before its period ended")
	}
	next := rtm.Position{Epoch: 7, Offset: 4}
	if err := sv.Count(frames(t, map[string]any{"a": "x"}, map[string]any{"a": "y"}, map[string]any{"a": "z"}), next, nil); err != nil {
		t.Fatal(err)
	}
	if from, ok := sv.Resume(); !ok || from != (rtm.Position{Epoch: 7, Offset: 1}) {
		t.Fatalf("resumes at %v (%v), want the period's first message", from, ok)
	}
	sv.agg.due.Store(true) // the ticker's part
	if !sv.Due() || sv.Due() {
		t.Fatal("a period's end is not due exactly once")
	}
	msgs, err := sv.Results(nil, payload.JSON)
	if err != nil || len(msgs) != 1 || string(msgs[0]) != `{"n":3}` || sv.Next() != next {
		t.Fatalf("results %q at %v (%v), want one count of 3 at %v", msgs, sv.Next(), err, next)
	}
	if _, ok := sv.Resume(); ok {
		t.Fatal("a sent period still resumes at its start")
	}
}

// TestMessagesGone stops between messages once the connection ends.
func TestMessagesGone(t *testing.T) {
	sv := compile(t, "SELECT * FROM a")
	gone := make(chan struct{})
	close(gone)
	if _, err := sv.Messages(nil, frames(t, "x"), payload.JSON, gone); !errors.Is(err, ErrGone) {
		t.Fatalf("Messages after the end: %v, want ErrGone", err)
	}
}
