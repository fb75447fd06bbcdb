package store

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/edge/store/storetest"
)

// TestFloodOfChannelsStaysWithinStoreBytes is the attack of issue 14: a
// publisher spraying messages over distinct channels. The store must hold
// no more than StoreBytes, channel structures included: the channels
// whose blocks the limit evicted are forgotten, and what the store counts
// is what it holds. Not parallel: it measures the process's heap.
func TestFloodOfChannelsStaysWithinStoreBytes(t *testing.T) {
	const (
		limit    = 8 << 20
		channels = 200_000
	)
	before := storetest.LiveHeap()
	s, _ := newTestStore(t, &Options{StoreBytes: limit})
	data := payload(0, 100)
	name := []byte("app\x00flood-")
	for i := range channels {
		key := strconv.AppendInt(name, int64(i), 10)
		if _, err := s.Append(string(key), data); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	held := storetest.LiveHeap() - before
	st := s.Stats()
	t.Logf("%d channels published: live heap +%d KiB, store says %d KiB in %d channels, %d blocks (limit %d KiB)",
		channels, held>>10, st.Memory>>10, st.Channels, st.Blocks, limit>>10)
	if st.Memory > limit+int64(DefaultFirstBlock+blockOverhead+channelOverhead+64) {
		t.Errorf("the store counts %d bytes, past its limit of %d by more than the block being written", st.Memory, limit)
	}
	// Its own accounting is what the store keeps within the limit; the
	// heap it really holds must follow it, give or take the allocator's
	// rounding and the maps' spare room.
	if held > 2*limit {
		t.Errorf("live heap grew by %d MiB for a store limited to %d MiB", held>>20, limit>>20)
	}
	if st.Channels >= channels/4 {
		t.Errorf("%d channels live out of %d: the evicted ones were not forgotten", st.Channels, channels)
	}
	// The newest channels are whole.
	last := string(strconv.AppendInt(name, channels-1, 10))
	if f, ok, err := s.Read(last, nil); err != nil || !ok || string(f.Data) != string(data) {
		t.Errorf("Read(newest channel) = %v, %v, want its message", ok, err)
	}
	runtime.KeepAlive(s)
}
