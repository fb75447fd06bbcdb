package rtm_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// sink keeps a result on the heap, so that allocation counts are honest.
var sink string

func TestReply(t *testing.T) {
	actions := []string{rtm.ActionPublish, rtm.ActionWrite, rtm.ActionDelete, rtm.ActionRead,
		rtm.ActionSubscribe, rtm.ActionUnsubscribe, rtm.ActionHandshake, rtm.ActionAuthenticate, "x/y"}
	for _, a := range actions {
		for _, o := range []string{rtm.OutcomeOK, rtm.OutcomeError} {
			if got, want := rtm.Reply(a, o), a+"/"+o; got != want {
				t.Errorf("Reply(%q, %q) = %q, want %q", a, o, got, want)
			}
		}
	}
	action := rtm.ActionPublish // not a constant, as in the edge
	if n := testing.AllocsPerRun(100, func() { sink = rtm.Reply(action, rtm.OutcomeOK) }); n != 0 {
		t.Errorf("the publish acknowledgment's action costs %v allocations, want 0", n)
	}
}

func TestID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		id   rtm.ID
		text string
		zero bool
	}{
		{"none", rtm.ID{}, "", true},
		{"int", rtm.IntID(-7), "-7", false},
		{"int zero is present", rtm.IntID(0), "0", false},
		{"string", rtm.StringID("7"), "7", false},
		{"empty string is present", rtm.StringID(""), "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.id.String() != tc.text || tc.id.IsZero() != tc.zero {
				t.Fatalf("%+v: String %q IsZero %v, want %q %v", tc.id, tc.id.String(), tc.id.IsZero(), tc.text, tc.zero)
			}
		})
	}
	if rtm.IntID(7) == rtm.StringID("7") {
		t.Fatal("the integer 7 and the string \"7\" are the same id")
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	p := &rtm.PublishBody{Message: 1}
	r := &rtm.ReadReply{Message: 2}
	d := &rtm.SubscriptionData{Messages: []any{3, 4}}
	for _, vc := range []rtm.ValueCarrier{p, r, d} {
		for _, v := range vc.Values() {
			*v = "seen"
		}
	}
	if p.Message != "seen" || r.Message != "seen" || d.Messages[0] != "seen" || d.Messages[1] != "seen" {
		t.Fatalf("Values did not point into the bodies: %v %v %v", p, r, d)
	}
}
