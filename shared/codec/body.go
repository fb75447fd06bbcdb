package codec

import "github.com/sluicehq/sluice/shared/rtm"

// AppendBody appends the body of a PDU in the encoding of p. Bodies that
// carry message values (PublishBody, ReadReply, SubscriptionData, maps) are
// written field by field, their messages by AppendValue, and so is the
// PositionBody of every publish acknowledgment; nil, rtm.Empty and
// nil pointers are an empty map. Other bodies, which carry no message
// values, go to other, which encodes them with the codec's library and
// appends nothing for a body the library writes as null (a nil pointer).
// On error the returned dst may hold part of the body: AppendPDU truncates
// it.
func AppendBody[P Primitives](dst []byte, body any, p P, other func(dst []byte, body any) ([]byte, error)) ([]byte, error) {
	switch b := body.(type) {
	case nil, rtm.Empty, *rtm.Empty:
	case *rtm.PublishBody:
		if b != nil && b.HasFields() {
			return appendValue(dst, publishMap(b), p, 0)
		}
		if b != nil {
			return appendPair(dst, p, "channel", b.Channel, b.Message)
		}
	case rtm.PublishBody:
		if b.HasFields() {
			return appendValue(dst, publishMap(&b), p, 0)
		}
		return appendPair(dst, p, "channel", b.Channel, b.Message)
	case *rtm.PreviousReply:
		if b != nil {
			return appendValue(dst, previousReplyMap(b), p, 0)
		}
	case rtm.PreviousReply:
		return appendValue(dst, previousReplyMap(&b), p, 0)
	case *rtm.PreviousError:
		if b != nil {
			return appendValue(dst, previousErrorMap(b), p, 0)
		}
	case rtm.PreviousError:
		return appendValue(dst, previousErrorMap(&b), p, 0)
	case *rtm.ReadReply:
		if b != nil {
			return appendPair(dst, p, "position", b.Position, b.Message)
		}
	case rtm.ReadReply:
		return appendPair(dst, p, "position", b.Position, b.Message)
	case *rtm.SubscriptionData:
		if b != nil {
			return appendData(dst, p, b)
		}
	case rtm.SubscriptionData:
		return appendData(dst, p, &b)
	case *rtm.PositionBody:
		// The acknowledgment of every publish: by hand, not by reflection.
		if b != nil {
			dst, err := appendField(p.AppendMapStart(dst, 1), p, 0, "position", b.Position)
			if err != nil {
				return dst, err
			}
			return p.AppendMapEnd(dst), nil
		}
	case *rtm.PresenceReply:
		if b != nil {
			return appendPresenceReply(dst, p, b)
		}
	case rtm.PresenceReply:
		return appendPresenceReply(dst, p, &b)
	case *rtm.SubscriptionPresence:
		if b != nil {
			return appendSubscriptionPresence(dst, p, b)
		}
	case rtm.SubscriptionPresence:
		return appendSubscriptionPresence(dst, p, &b)
	case map[string]any, map[any]any:
		return appendValue(dst, b, p, 0)
	default:
		start := len(dst)
		dst, err := other(dst, body)
		if err != nil || len(dst) > start {
			return dst, err
		}
	}
	return p.AppendMapEnd(p.AppendMapStart(dst, 0)), nil
}

// appendPair writes a body of a string field and a "message" field.
func appendPair[P Primitives](dst []byte, p P, name, s string, msg any) ([]byte, error) {
	dst = p.AppendMapStart(dst, 2)
	dst, err := appendField(dst, p, 0, name, s)
	if err != nil {
		return dst, err
	}
	if dst, err = p.AppendMapKey(dst, 1, "message"); err != nil {
		return dst, err
	}
	if dst, err = appendValue(dst, msg, p, 0); err != nil {
		return dst, err
	}
	return p.AppendMapEnd(dst), nil
}

func appendData[P Primitives](dst []byte, p P, b *rtm.SubscriptionData) ([]byte, error) {
	n, i := 3, 0
	if b.Channel != "" {
		n++
	}
	if b.Delta {
		n++
	}
	dst = p.AppendMapStart(dst, n)
	dst, err := appendField(dst, p, i, "subscription_id", b.SubscriptionID)
	i++
	if err == nil && b.Channel != "" {
		dst, err = appendField(dst, p, i, "channel", b.Channel)
		i++
	}
	if err == nil {
		dst, err = appendField(dst, p, i, "position", b.Position)
		i++
	}
	if err == nil {
		dst, err = p.AppendMapKey(dst, i, "messages")
	}
	if err != nil {
		return dst, err
	}
	dst = p.AppendArrayStart(dst, len(b.Messages))
	for i, m := range b.Messages {
		if dst, err = appendValue(p.AppendArrayItem(dst, i), m, p, 0); err != nil {
			return dst, err
		}
	}
	dst = p.AppendArrayEnd(dst)
	if b.Delta {
		if dst, err = p.AppendMapKey(dst, n-1, "delta"); err != nil {
			return dst, err
		}
		dst = p.AppendBool(dst, true)
	}
	return p.AppendMapEnd(dst), nil
}

// appendField writes pair i of a body, a string field.
func appendField[P Primitives](dst []byte, p P, i int, name, s string) ([]byte, error) {
	dst, err := p.AppendMapKey(dst, i, name)
	if err != nil {
		return dst, err
	}
	return p.AppendText(dst, s), nil
}
