package view_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/view"
)

func TestPeriod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		seconds int64
		want    time.Duration
		err     error
	}{
		{name: "absent", seconds: 0, want: time.Second},
		{name: "one", seconds: 1, want: time.Second},
		{name: "most", seconds: 60, want: time.Minute},
		{name: "too long", seconds: 61, err: view.ErrPeriod},
		{name: "negative", seconds: -1, err: view.ErrPeriod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := view.Period(tt.seconds)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("Period(%d) = %v, %v; want %v, %v", tt.seconds, got, err, tt.want, tt.err)
			}
		})
	}
}
