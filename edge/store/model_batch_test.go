package store

import (
	"fmt"

	"github.com/sluicehq/sluice/shared/rtm"
)

// handle returns the run's Channel handle for name.
func (h *harness) handle(name string) *Channel {
	if c := h.handles[name]; c != nil {
		return c
	}
	c := h.s.Channel(name)
	h.handles[name] = c
	return c
}

// doCursorBatch compares one Cursor.ReadBatch with the model's batch: the
// wanted messages of the first block holding any.
func (h *harness) doCursorBatch() {
	mc := h.cursor()
	if mc == nil {
		return
	}
	h.op = fmt.Sprintf("Cursor.ReadBatch(%s at %d)", mc.ch.name, mc.next)
	bt, err := mc.c.ReadBatch()
	want, werr := h.m.cursorBatch(mc)
	if werr != nil {
		e := oosError(h.t, err)
		if *e != *werr {
			h.fail("ReadBatch err = %+v, model %+v", *e, *werr)
		}
		return
	}
	if err != nil {
		h.fail("ReadBatch: %v", err)
	}
	h.checkBatch(&bt, want)
	if got, want := mc.c.Position(), (rtm.Position{Epoch: mc.ch.epoch, Offset: mc.next}); got != want {
		h.fail("cursor at %v, model %v", got, want)
	}
}

// checkBatch compares a batch, through each of its accessors, with the
// model's messages.
func (h *harness) checkBatch(bt *Batch, want []mMsg) {
	h.t.Helper()
	size := 0
	for _, msg := range want {
		size += len(msg.data)
	}
	if bt.Len() != len(want) || bt.Size() != size {
		h.fail("batch of %d frames, %d bytes; model %d, %d", bt.Len(), bt.Size(), len(want), size)
	}
	if len(want) > 0 && (bt.First() != want[0].off || bt.Last() != want[len(want)-1].off) {
		h.fail("batch %d..%d, model %d..%d", bt.First(), bt.Last(), want[0].off, want[len(want)-1].off)
	}
	i := 0
	for f := range bt.ForEach {
		if i >= len(want) {
			h.fail("ForEach: more than %d frames", len(want))
		}
		h.checkFrame(f, want[i])
		i++
	}
	var f Frame
	for i = 0; bt.Next(&f); i++ {
		if i >= len(want) {
			h.fail("Next: more than %d frames", len(want))
		}
		h.checkFrame(f, want[i])
	}
	if i != len(want) || bt.Next(&f) {
		h.fail("Next gave %d frames, model %d", i, len(want))
	}
}

// cursorBatch is ReadBatch on the model: the messages at or past the
// cursor's position in the first block holding any, or the loss if that
// block is deleted.
func (m *model) cursorBatch(mc *mCursor) ([]mMsg, *OutOfSyncError) {
	for _, b := range mc.ch.blocks {
		var out []mMsg
		for _, msg := range b.msgs {
			if msg.off >= mc.next {
				out = append(out, msg)
			}
		}
		switch {
		case len(out) == 0:
			continue
		case b.deleted:
			return m.cursorRead(mc, 0) // reports the loss as Read does
		}
		mc.next = out[len(out)-1].off + 1
		return out, nil
	}
	return nil, nil
}
