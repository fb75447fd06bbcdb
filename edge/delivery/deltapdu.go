package delivery

import (
	"sync"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// A data PDU of one delta, in each codec that carries deltas, is a head
// that depends on the subscription id alone, then the position and the
// delta: the same for every subscriber of the channel that gets the
// message. So a delta subscriber keeps its head (pduHead) and copies the
// tail that the first subscriber to send the message wrote
// (deltaLog.appendDeltaPDU); the codec writes it once per message rather
// than once per delivery, position in text included.
//
// The split is found with the codec's own AppendDeltaData, and checked:
// a codec whose PDUs do not split so has its PDUs written whole, as
// before. The codecs themselves are left as they are: they are linked
// into the browser client's sluice.wasm, which must stay the bytes
// committed.

// splitPositions are two positions whose encodings differ from their
// first byte, in every codec: a text of another length and first digit.
var splitPositions = [2]rtm.Position{{Epoch: 1}, {Epoch: 22}}

// pduSplit returns where the position's encoding starts in enc's delta
// data PDUs for id, and the PDU of no message at the first
// splitPositions; -1 if the two PDUs do not differ.
func pduSplit(enc codec.DeltaEncoder, id string) (int, []byte) {
	a := enc.AppendDeltaData(nil, id, splitPositions[0], nil)
	b := enc.AppendDeltaData(nil, id, splitPositions[1], nil)
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i, a
		}
	}
	return -1, a
}

// tailSplits is, by codec index, pduSplit for the empty subscription id:
// where a tail starts in a PDU written for it.
var tailSplits [payload.NumCodecs]struct {
	once sync.Once
	at   int
	pdu  []byte
}

// tailSplit returns pduSplit of the empty id for enc, the codec at index
// ci.
func tailSplit(enc codec.DeltaEncoder, ci int) (int, []byte) {
	t := &tailSplits[ci]
	t.once.Do(func() { t.at, t.pdu = pduSplit(enc, "") })
	return t.at, t.pdu
}

// pduHead returns the head of enc's delta data PDUs for id, or nil when
// a PDU is not that head and a tail that is the same for the empty id.
func pduHead(enc codec.DeltaEncoder, ci int, id string) []byte {
	at, pdu := pduSplit(enc, id)
	at0, pdu0 := tailSplit(enc, ci)
	if at < 0 || at0 < 0 || string(pdu[at:]) != string(pdu0[at0:]) {
		return nil
	}
	return pdu[:at:at]
}

// appendPDUTail appends the tail of enc's delta data PDU at pos of
// deltas; enc is the codec at index ci, whose PDUs split (pduHead).
func appendPDUTail(dst []byte, enc codec.DeltaEncoder, ci int, pos rtm.Position, deltas [][]byte) []byte {
	at, _ := tailSplit(enc, ci)
	n := len(dst)
	dst = enc.AppendDeltaData(dst, "", pos, deltas)
	return append(dst[:n], dst[n+at:]...)
}
