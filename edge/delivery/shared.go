package delivery

import (
	"unsafe"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// sharedFrames are a fan-out worker's last data frame in each codec (a
// channel's subscribers may speak several).
type sharedFrames [payload.NumCodecs]sharedFrame

// reset drops what is kept, so that an idle worker keeps no block alive.
func (sf *sharedFrames) reset() {
	for i := range sf {
		sf[i].reset()
	}
}

// sharedFrame is a fan-out worker's last data frame: the WebSocket frame
// of one rtm/subscription/data PDU, with what its bytes were made from,
// so that the subscribers woken with it whose frame would be the same
// bytes copy it instead of encoding it again: a message to a thousand
// subscribers of a channel is encoded once per worker, not once per
// subscriber.
//
// The frame is the same bytes for two deliveries when they carry the same
// stored frames in the same codec, under the same subscription id, as
// the same WebSocket opcode with the same permessage-deflate threshold
// (or none: without context takeover a compressed message does not
// depend on the connection), and nothing of the connection's own changes
// them. A message compressed for one subscriber is so compressed once
// for all those the worker serves. So only plain subscriptions share it: no view, no value_changes
// filter, no prefix (whose PDUs name the channel), and a batch in which no
// message has an origin (exclude_self: which messages a connection gets
// depends on who it is); those encode their own, as before.
//
// The stored frames are named by their Data: blocks are never reused
// (edge/store), and sharedFrame keeps the first and last Data of the
// batch, so their block stays alive and no other message can take their
// address. A cursor reads every message from its position on, so the same
// first and last message and the same count are the same messages.
type sharedFrame struct {
	first, last []byte // Data of the batch's first and last messages; nil: nothing kept
	n           int    // messages in the batch
	epoch       uint64 // of the positions
	id          string // the subscription id
	codec       int    // codecIndex
	op          websocket.Opcode
	deflate     int    // the connection's socket.deflate
	delta       uint64 // subDelta.key before the batch: what its deltas are against
	frame       []byte // the WebSocket frame of the PDU
	pdu         int    // bytes of the PDU in frame (counters.bytesOut)
	msgs        int    // messages in the PDU (counters.messagesOut)
}

// shareable reports whether a frame of sub may be shared: see sharedFrame.
// frames are those sendData was given, not yet filtered.
func (c *Conn) shareable(w *writer, sub *Subscription, frames []store.Frame) bool {
	return w.share != nil && !w.logFrames && !sub.Cursor.Origins() &&
		sub.View == nil && sub.Changes == nil && !sub.named &&
		len(frames[0].Data) > 0 && len(frames[len(frames)-1].Data) > 0
}

// matches reports whether the kept frame is the one c would send for
// frames of sub.
func (sf *sharedFrame) matches(c *Conn, sub *Subscription, frames []store.Frame, epoch, delta uint64) bool {
	return sf.first != nil && sf.n == len(frames) &&
		sameBytes(sf.first, frames[0].Data) && sameBytes(sf.last, frames[len(frames)-1].Data) &&
		sf.epoch == epoch && sf.codec == c.codecIndex && sf.op == c.op && sf.deflate == c.deflate && sf.id == sub.ID &&
		sf.delta == delta
}

// keep keeps pdu, the data PDU c encoded for frames of sub, framed, for
// the next deliveries of the same frames; delta is sub's subDelta.key
// before them.
func (sf *sharedFrame) keep(c *Conn, sub *Subscription, frames []store.Frame, epoch, delta uint64, pdu []byte, msgs int) {
	sf.first, sf.last, sf.n, sf.delta = frames[0].Data, frames[len(frames)-1].Data, len(frames), delta
	sf.epoch, sf.codec, sf.op, sf.deflate, sf.id = epoch, c.codecIndex, c.op, c.deflate, sub.ID
	sf.frame = c.ws.AppendFrame(sf.frame[:0], c.op, pdu)
	sf.pdu, sf.msgs = len(pdu), msgs
}

// reset drops what is kept, so that an idle worker keeps no block alive.
func (sf *sharedFrame) reset() {
	sf.first, sf.last, sf.id = nil, nil, ""
}

// sameBytes reports whether a and b are the same bytes in memory, not
// only equal ones.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// writeFrame adds the kept frame to the writer's output, as write does
// for a PDU it frames.
func (c *Conn) writeFrame(w *writer, sf *sharedFrame) error {
	w.out = append(w.out, sf.frame...)
	return c.wrote(w, sf.pdu)
}

// sendShared sends the worker's kept frame for frames of sub when it is
// the one c would send (done), or returns where to keep the frame c is
// about to encode (nil: c's frame is not to be shared).
func (c *Conn) sendShared(w *writer, sub *Subscription, frames []store.Frame, next rtm.Position) (sf *sharedFrame, done bool, err error) {
	if !c.shareable(w, sub, frames) {
		return nil, false, nil
	}
	sf = &w.share[c.codecIndex]
	if !sf.matches(c, sub, frames, next.Epoch, sub.delta.key()) {
		return sf, false, nil
	}
	sub.delta.sent(&frames[len(frames)-1], next.Epoch)
	c.eng.counters.MessagesOut[c.codecIndex].Add(uint64(sf.msgs))
	c.traffic.MessagesOut.Add(uint64(sf.msgs))
	if err = c.writeFrame(w, sf); err == nil && c.eng.firstSeen != nil {
		c.observeFirst(sub, frames)
	}
	return nil, true, err
}
