package wire

import (
	"math"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// EmptyBody is the body of a PDU that has none: an empty map.
var EmptyBody = []byte{0x80}

// PDUFields assembles the envelope of a PDU from the pairs of its
// top-level map, as the msgpack codec reads them: a string action, an
// optional integer or string id and an optional map body, each given at
// most once. The codec walks the frame and words its framing errors
// itself.
type PDUFields struct {
	env              rtm.Envelope
	action, id, body bool
}

// Field takes the pair key: item, its value as one whole item already
// checked as Scanner.Skip checks it (lengths, UTF-8). Other keys are
// ignored. The body aliases item. After an error p is not to be used.
func (p *PDUFields) Field(key, item []byte) error {
	var seen *bool
	var ok bool
	var why rtm.Fault
	switch string(key) {
	case "action":
		seen, why = &p.action, rtm.PDUActionType
		p.env.Action, ok = readAction(item)
	case "id":
		seen, why = &p.id, rtm.PDUIDType
		p.env.ID, ok = readID(item)
	case "body":
		seen, why = &p.body, rtm.PDUBodyType
		p.env.Body, ok = item, IsMap(item)
	default:
		return nil
	}
	// One exit for the three fields keeps sluice.wasm smaller.
	if err := codec.Once(seen); err != nil {
		return err
	}
	if !ok {
		return rtm.Invalid(why)
	}
	return nil
}

// Envelope returns the envelope once every pair has been taken: an
// invalid_format without an action, an empty map for a missing body.
func (p *PDUFields) Envelope() (rtm.Envelope, error) {
	if !p.action {
		return rtm.Envelope{}, rtm.Invalid(rtm.PDUNoAction)
	}
	if !p.body {
		p.env.Body = EmptyBody
	}
	return p.env, nil
}

// readAction reads a PDU's action, a string item. A known action comes back
// as a shared constant without allocating (see codec.Action).
func readAction(item []byte) (string, bool) {
	k, _, i, err := Head(item, 0)
	if err != nil || k != KindString {
		return "", false
	}
	return codec.Action(item[i:]), true
}

// readID reads a PDU's id keeping its type: an integer that fits an int64
// or a string. Anything else could not be echoed faithfully.
func readID(item []byte) (rtm.ID, bool) {
	k, n, i, err := Head(item, 0)
	switch {
	case err != nil:
	case k == KindInt, k == KindUint && n <= math.MaxInt64:
		return rtm.IntID(int64(n)), true
	case k == KindString:
		return rtm.StringID(string(item[i:])), true
	}
	return rtm.ID{}, false
}

// IsMap reports whether item is a map.
func IsMap(item []byte) bool {
	k, _, _, err := Head(item, 0)
	return err == nil && k == KindMap
}

// AppendPDUStart appends the start of a PDU map {"action","id"?,"body"}: its
// header, the action, the id unless it is absent, and the key "body", whose
// value the caller appends next. The caller checks that action and a string
// id are valid UTF-8, as a decoder requires.
func AppendPDUStart(dst []byte, action string, id rtm.ID) []byte {
	n := 2
	if id.Kind == rtm.IDInt || id.Kind == rtm.IDString {
		n = 3
	}
	dst = AppendMapHead(dst, n)
	dst = AppendString(AppendString(dst, "action"), action)
	switch id.Kind {
	case rtm.IDInt:
		dst = AppendInt(AppendString(dst, "id"), id.Int)
	case rtm.IDString:
		dst = AppendString(AppendString(dst, "id"), id.Str)
	}
	return AppendString(dst, "body")
}

// AppendData appends an rtm/subscription/data PDU whose messages were
// encoded by AppendValue, splicing them in as they are. It is the edge's
// fan-out hot path: with room in dst it does not allocate. subscriptionID
// must be valid UTF-8, as every string a codec decodes is.
func AppendData(dst []byte, subscriptionID string, pos rtm.Position, messages [][]byte) []byte {
	return appendData(dst, 3, subscriptionID, pos, messages)
}

// AppendDeltaData appends an rtm/subscription/data PDU of deltas (the
// delta extension): AppendData's, with delta: true.
func AppendDeltaData(dst []byte, subscriptionID string, pos rtm.Position, deltas [][]byte) []byte {
	dst = appendData(dst, 4, subscriptionID, pos, deltas)
	return append(AppendString(dst, "delta"), typeTrue)
}

// appendData appends a data PDU whose body has fields fields, the last
// ones left to the caller after the messages.
func appendData(dst []byte, fields int, subscriptionID string, pos rtm.Position, messages [][]byte) []byte {
	dst = AppendMapHead(dst, 2)
	dst = AppendString(AppendString(dst, "action"), rtm.ActionSubscriptionData)
	dst = AppendMapHead(AppendString(dst, "body"), fields)
	dst = AppendString(AppendString(dst, "subscription_id"), subscriptionID)
	dst = AppendString(dst, "position")
	if n := textLen(pos); n < 32 { // at most 41 bytes
		dst = append(dst, 0xa0|byte(n))
	} else {
		dst = append(dst, 0xd9, byte(n))
	}
	dst = pos.AppendText(dst)
	dst = AppendArrayHead(AppendString(dst, "messages"), len(messages))
	for _, m := range messages {
		dst = append(dst, m...)
	}
	return dst
}

// textLen is the length of pos's text form, needed before writing it.
func textLen(pos rtm.Position) int { return digits(pos.Epoch) + 1 + digits(pos.Offset) }

func digits(n uint64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
