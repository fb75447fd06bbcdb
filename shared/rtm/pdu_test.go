package rtm_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

func TestReply(t *testing.T) {
	t.Parallel()
	if got := rtm.Reply(rtm.ActionPublish, rtm.OutcomeOK); got != "rtm/publish/ok" {
		t.Fatalf("Reply = %q", got)
	}
	if got := rtm.Reply(rtm.ActionHandshake, rtm.OutcomeError); got != "auth/handshake/error" {
		t.Fatalf("Reply = %q", got)
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
