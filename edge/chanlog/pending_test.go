package chanlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Pending.Wait gives the journal's answer when it comes by the request's
// deadline or within fateGrace after it (the journal answers at the same
// deadline, on its next tick), else says the fate is unknown; a canceled
// request is the context's error.
func TestPendingWaitOneDeadline(t *testing.T) {
	notStored := errors.New("not stored")
	tests := []struct {
		name    string
		answer  func(ctx context.Context, done func(uint64, error)) // how the journal answers
		cancel  bool
		want    error
		wantOff uint64
	}{
		{"in time", func(_ context.Context, done func(uint64, error)) { done(7, nil) }, false, nil, 7},
		{"at the deadline", func(ctx context.Context, done func(uint64, error)) {
			go func() { <-ctx.Done(); done(0, notStored) }()
		}, false, notStored, 0},
		{"never", func(context.Context, func(uint64, error)) {}, false, store.ErrFateUnknown, 0},
		{"canceled", func(context.Context, func(uint64, error)) {}, true, context.Canceled, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if tt.cancel {
				cancel()
			}
			off, err := wait(ctx, func(done func(uint64, error)) { tt.answer(ctx, done) })
			if off != tt.wantOff || !errors.Is(err, tt.want) && err != tt.want {
				t.Fatalf("wait = %d, %v; want %d, %v", off, err, tt.wantOff, tt.want)
			}
		})
	}
}

// Then gets the answer whether it came before or after Then was called,
// exactly once.
func TestPendingThen(t *testing.T) {
	for _, early := range []bool{true, false} {
		p := &Pending{}
		want := rtm.Position{Epoch: 3, Offset: 9}
		if early {
			p.answer(want, nil)
		}
		got := make(chan rtm.Position, 2)
		p.Then(func(pos rtm.Position, err error) {
			if err != nil {
				t.Errorf("Then got %v", err)
			}
			got <- pos
		})
		if !early {
			p.answer(want, nil)
		}
		if pos := <-got; pos != want || len(got) != 0 {
			t.Fatalf("early=%v: Then got %v (and %d more), want %v once", early, pos, len(got), want)
		}
	}
}
