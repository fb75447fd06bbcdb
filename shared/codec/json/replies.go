package json

import (
	"strconv"

	"github.com/sluicehq/sluice/shared/rtm"
)

// appendReply writes the bodies without message values that an edge sends
// most (errors, subscribe and unsubscribe replies, subscription info and
// errors) by hand, to exactly the bytes encoding/json's Marshal gives them
// (fields in declaration order, omitempty honoured, strings escaped as the
// library does), without its reflection. It reports false for other
// bodies, and for nil pointers, which the library writes as null.
func appendReply(dst []byte, body any) ([]byte, bool) {
	switch b := body.(type) {
	case *rtm.ErrorBody:
		if b != nil {
			return appendErrorBody(dst, b), true
		}
	case rtm.ErrorBody:
		return appendErrorBody(dst, &b), true
	case *rtm.SubscribeReply:
		if b != nil {
			return appendSubscribed(dst, b.Position, b.SubscriptionID), true
		}
	case *rtm.UnsubscribeReply:
		if b != nil {
			return appendSubscribed(dst, b.Position, b.SubscriptionID), true
		}
	case *rtm.SubscriptionInfo:
		if b != nil {
			return appendInfo(dst, b), true
		}
	case *rtm.SubscriptionError:
		if b != nil {
			return appendSubscriptionError(dst, b), true
		}
	}
	return dst, false
}

// object writes the fields of one JSON object.
type object struct {
	dst []byte
	n   int
}

func (o *object) key(name string) {
	if o.n == 0 {
		o.dst = append(o.dst, '{')
	} else {
		o.dst = append(o.dst, ',')
	}
	o.n++
	o.dst = append(appendLibraryString(o.dst, name), ':')
}

func (o *object) text(name, v string) {
	o.key(name)
	o.dst = appendLibraryString(o.dst, v)
}

// optional writes a field tagged omitempty: not at all when it is "".
func (o *object) optional(name, v string) {
	if v != "" {
		o.text(name, v)
	}
}

func (o *object) uint(name string, v uint64) {
	o.key(name)
	o.dst = strconv.AppendUint(o.dst, v, 10)
}

func (o *object) end() []byte {
	if o.n == 0 {
		return append(o.dst, "{}"...)
	}
	return append(o.dst, '}')
}

func appendErrorBody(dst []byte, b *rtm.ErrorBody) []byte {
	o := object{dst: dst}
	o.text("error", b.Error)
	o.text("reason", b.Reason)
	o.optional("position", b.Position)
	o.optional("subscription_id", b.SubscriptionID)
	return o.end()
}

func appendSubscribed(dst []byte, position, id string) []byte {
	o := object{dst: dst}
	o.text("position", position)
	o.text("subscription_id", id)
	return o.end()
}

func appendInfo(dst []byte, b *rtm.SubscriptionInfo) []byte {
	o := object{dst: dst}
	o.text("info", b.Info)
	o.text("reason", b.Reason)
	o.text("position", b.Position)
	o.text("subscription_id", b.SubscriptionID)
	o.uint("missed_message_count", b.MissedMessageCount)
	return o.end()
}

func appendSubscriptionError(dst []byte, b *rtm.SubscriptionError) []byte {
	o := object{dst: dst}
	o.text("error", b.Error)
	o.text("reason", b.Reason)
	o.optional("position", b.Position)
	o.text("subscription_id", b.SubscriptionID)
	o.uint("missed_message_count", b.MissedMessageCount)
	return o.end()
}
