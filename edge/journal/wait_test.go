package journal

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
)

// A publish JetStream stored is acknowledged only once this edge's store
// holds it: with the feed stalled, it fails at its deadline as its fate
// unknown (it was stored), never an ok the store does not back. Before,
// a look at the stream that found it unchanged made it an ok, and the
// chaos test saw acks across a failover that this edge could not read.
// The store gets the message all the same once the feed goes on.
func TestAckWaitsForTheStore(t *testing.T) {
	j, st := open(t, node(t, ""), &Options{PublishTimeout: time.Second})
	key := "demo\x00stall"
	j.feed.applyMu.Lock() // the feed applies nothing
	errc := make(chan error, 1)
	j.PublishFrom(context.Background(), key, []byte("x"), "", "", func(_ uint64, err error) { errc <- err })
	var err error
	select {
	case err = <-errc:
	case <-time.After(30 * time.Second):
		err = errors.New("no answer within 30s")
	}
	j.feed.applyMu.Unlock()
	if !errors.Is(err, ErrFateUnknown) || errors.Is(err, ErrNotStored) {
		t.Fatalf("a publish stored while the feed stalled: %v, want ErrFateUnknown", err)
	}
	poll.WithinNil(t, 30*time.Second, "the message in the store once the feed goes on", func() error {
		if _, found, err := st.Read(key, nil); err != nil || !found {
			return fmt.Errorf("not in the store (%v)", err)
		}
		return nil
	})
}
