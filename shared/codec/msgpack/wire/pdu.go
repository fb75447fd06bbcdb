package wire

import "github.com/sluicehq/sluice/shared/rtm"

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
	dst = AppendMapHead(dst, 2)
	dst = AppendString(AppendString(dst, "action"), rtm.ActionSubscriptionData)
	dst = AppendMapHead(AppendString(dst, "body"), 3)
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
