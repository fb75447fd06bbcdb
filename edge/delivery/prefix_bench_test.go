package delivery

import "testing"

// BenchmarkSendDataPrefix is BenchmarkSendData for a subscriber of a
// prefix subscription, whose data PDUs name their channel: written
// through the codec's AppendPDU, not its AppendData fast path.
func BenchmarkSendDataPrefix(b *testing.B) {
	r := newDeliveryRig(b)
	r.sub.named = true
	b.ReportAllocs()
	for b.Loop() {
		r.send(b)
	}
}

// TestSendDataPrefixAllocs bounds what a prefix subscription's data PDU
// costs: one allocation (the position's text) per PDU, never one per
// message.
func TestSendDataPrefixAllocs(t *testing.T) {
	r := newDeliveryRig(t)
	r.sub.named = true
	r.send(t)
	if n := testing.AllocsPerRun(100, func() { r.send(t) }); n > 1 {
		t.Errorf("sendData of a prefix subscription allocates %v times per batch of 16, want at most 1", n)
	}
}
