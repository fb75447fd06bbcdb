package journal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestStreamLost: a stream deleted under a running journal, or deleted
// and created again (a new epoch, whose sequences restart at 1), is
// noticed within the watchdog's period: the journal reports it once,
// stops acknowledging publishes (a position of the old epoch for a
// message of the new stream would be a lie) and is not ready.
func TestStreamLost(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		name := "deleted"
		if recreate {
			name = "created again"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n := node(t, "")
			lost := make(chan error, 2)
			j, _ := open(t, n, &Options{OnLost: func(err error) { lost <- err }})
			publish(t, j, "app\x00room", "before")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := j.stream.CachedInfo().Config
			if recreate {
				// nats-server removes the account's streams directory
				// in the background once its last stream is deleted,
				// racing the creation below ("could not create storage
				// directory"): a second stream keeps it from being empty.
				keep := jetstream.StreamConfig{Name: "KEEP", Subjects: []string{"keep.>"}}
				if _, err := j.js.CreateStream(ctx, keep); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.js.DeleteStream(ctx, cfg.Name); err != nil {
				t.Fatal(err)
			}
			if recreate {
				if _, err := j.js.CreateStream(ctx, cfg); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			select {
			case err = <-lost:
			case <-ctx.Done():
				t.Fatal("the journal did not notice that its stream is gone")
			}
			// The consumer's loss makes the journal look at once, so a
			// stream created again may be seen between the two steps.
			want := []string{"was deleted while"}
			if recreate {
				want = append(want, "was deleted and created again")
			}
			if !errors.Is(err, ErrStreamLost) || !slices.ContainsFunc(want, func(w string) bool { return strings.Contains(err.Error(), w) }) {
				t.Fatalf("OnLost(%v), want an ErrStreamLost saying one of %q", err, want)
			}
			if r := j.Ready(); !errors.Is(r, ErrStreamLost) {
				t.Fatalf("Ready() = %v after the stream was lost", r)
			}
			done := make(chan error, 1)
			j.Publish("app\x00room", []byte("after"), func(_ uint64, err error) { done <- err })
			if err := <-done; !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrStreamLost) {
				t.Fatalf("a publish after the loss: %v, want unavailable because the stream is lost", err)
			}
			select {
			case again := <-lost:
				t.Fatalf("OnLost called twice: %v", again)
			default:
			}
			if recreate {
				// The new stream got nothing from this journal.
				s, err := j.js.Stream(ctx, cfg.Name)
				if err != nil {
					t.Fatal(err)
				}
				if info, err := s.Info(ctx); err != nil || info.State.Msgs != 0 {
					t.Fatalf("the new stream holds %v messages (%v)", info.State.Msgs, err)
				}
			}
		})
	}
}
