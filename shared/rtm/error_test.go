package rtm_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

func TestError(t *testing.T) {
	t.Parallel()
	e := &rtm.Error{Code: rtm.CodeExpiredPosition, Reason: "position 1:2 has expired"}
	if got, want := e.Error(), "rtm: expired_position: position 1:2 has expired"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	e.Position, e.SubscriptionID = "1:2", "s1"
	want := &rtm.ErrorBody{Error: "expired_position", Reason: "position 1:2 has expired", Position: "1:2", SubscriptionID: "s1"}
	if got := e.Body(); *got != *want {
		t.Fatalf("Body() = %+v, want %+v", got, want)
	}
}

func TestAsError(t *testing.T) {
	t.Parallel()
	base := &rtm.Error{Code: rtm.CodeNotSubscribed, Reason: "no such subscription"}
	cases := []struct {
		name string
		err  error
		want *rtm.Error
	}{
		{"direct", base, base},
		{"wrapped", fmt.Errorf("unsubscribe: %w", base), base},
		{"wrapped twice", fmt.Errorf("conn: %w", fmt.Errorf("unsubscribe: %w", base)), base},
		{"joined", errors.Join(errors.New("other"), base), base},
		{"plain error", errors.New("rtm: internal"), nil},
		{"nil", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := rtm.AsError(tc.err)
			if got != tc.want || ok != (tc.want != nil) {
				t.Fatalf("AsError(%v) = %v, %v; want %v", tc.err, got, ok, tc.want)
			}
		})
	}
}
