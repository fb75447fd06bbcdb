package delivery

import (
	"bytes"
)

// ValueChanges serves rtm/subscribe with only: "value_changes": a message
// equal to the one delivered before it on the subscription is not
// delivered. Messages are compared as their encodings in the
// connection's codec, which the edge writes canonically (one encoding per
// value: map keys sorted, numbers in their shortest form), so equal bytes
// are equal decoded values and the comparison costs no decoding. It is
// the subscription's writer's alone.
type ValueChanges struct {
	last []byte // the last message delivered, copied: its payload may go
	has  bool   // whether one was delivered yet
}

// filter drops, in place, each message of msgs equal to the one before it
// (the last delivered, for the first), and remembers the last it keeps.
// It does not allocate once last has grown to the messages' size.
func (vc *ValueChanges) filter(msgs [][]byte) [][]byte {
	out := msgs[:0]
	prev, has := vc.last, vc.has
	for _, m := range msgs {
		if has && bytes.Equal(m, prev) {
			continue
		}
		out = append(out, m)
		prev, has = m, true
	}
	if len(out) > 0 {
		vc.last, vc.has = append(vc.last[:0], out[len(out)-1]...), true
	}
	clear(msgs[len(out):]) // let go of the payloads dropped
	return out
}
