package delivery

import (
	"strings"
	"testing"
)

// changesRig is deliveryRig's subscriber with only: value_changes, over
// 16 stored messages where each differs from the one before (two values
// in turn), so that every message is compared and every one delivered.
func changesRig(tb testing.TB) *deliveryRig {
	tb.Helper()
	r := newDeliveryRig(tb)
	msgs := make([]any, 16)
	for i := range msgs {
		msgs[i] = strings.Repeat(string(rune('a'+i%2)), 128)
	}
	cur := r.storeFrom(tb, "bench.alt", nil, msgs...)
	frames := r.read(tb, cur, 16)
	r.sub = &Subscription{ID: "bench", Channel: "bench.alt", Cursor: cur, Options: Options{Changes: &ValueChanges{}}}
	r.frames = frames
	return r
}

// BenchmarkSendDataValueChanges is BenchmarkSendData with only:
// value_changes: the comparison with the message before, and the copy of
// the last one kept, must not allocate either.
func BenchmarkSendDataValueChanges(b *testing.B) {
	r := changesRig(b)
	b.ReportAllocs()
	for b.Loop() {
		r.send(b)
	}
}

// TestSendDataValueChangesAllocs keeps value_changes delivery at zero
// allocations, and checks it delivers all 16 alternating messages.
func TestSendDataValueChangesAllocs(t *testing.T) {
	r := changesRig(t)
	before := r.c.traffic.MessagesOut.Load()
	r.send(t) // the writer's buffers, and the last value's, grow once
	if n := r.c.traffic.MessagesOut.Load() - before; n != 16 {
		t.Fatalf("delivered %d of 16 alternating messages", n)
	}
	if n := testing.AllocsPerRun(100, func() { r.send(t) }); n != 0 {
		t.Errorf("sendData with value_changes allocates %v times per batch, want 0", n)
	}
}

// TestValueChangesFilter: equal neighbours are dropped, across batches
// too, and the last kept is a copy that outlives the batch's buffers.
func TestValueChangesFilter(t *testing.T) {
	t.Parallel()
	var vc ValueChanges
	b := func(ss ...string) [][]byte {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return out
	}
	str := func(ms [][]byte) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = string(m)
		}
		return out
	}
	tests := []struct {
		name string
		in   [][]byte
		want []string
	}{
		{"first batch", b("1", "1", "2", "1"), []string{"1", "2", "1"}},
		{"equal to the last delivered", b("1", "1"), []string{}},
		{"then a change", b("1", "3", "3"), []string{"3"}},
	}
	for _, tt := range tests {
		batch := tt.in
		got := str(vc.filter(batch))
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Fatalf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		for _, m := range batch {
			for i := range m {
				m[i] = 'x' // the caller's buffers are reused
			}
		}
	}
	if string(vc.last) != "3" {
		t.Fatalf("last kept %q, want 3: it must be a copy", vc.last)
	}
}
