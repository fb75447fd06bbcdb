package msgpack

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// This file and requests.go are the browser's tail of the codec (see the
// package doc): the bodies a client receives, mapped from the value model,
// and the bodies it sends, written field by field, each by a type switch,
// which costs a fraction of what mapping structs by reflection (or the
// msgpack library) adds to sluice.wasm. They build everywhere and are
// tested natively against the library's tail (the tests' Browser codec);
// only js builds use them (tail_js.go).

// errBodyType reports a body type the client never sends or receives.
var errBodyType = errors.New("msgpack: body type not supported by the browser codec")

// errNonCanonical refuses a body the canonical model has no room for.
var errNonCanonical = errors.New("msgpack: NaN, infinities and map keys that are not valid UTF-8 are not messages")

// decodeMapped decodes a body into v, a pointer to one of the reply and
// push bodies a client receives, or to a map[string]any or an any. Message
// values come out in the canonical model; a body holding a NaN, an
// infinity or a map key that is not valid UTF-8 anywhere is refused. A
// body that is not valid msgpack or does not fit v is invalid_format, its
// reason the decoder's.
func decodeMapped(body []byte, v any) error {
	d := wire.NewDecoder(body)
	val, err := d.Value(0)
	switch {
	case err != nil:
	case d.End() != nil:
		err = wire.ErrExtra
	case d.NonCanonical():
		err = errNonCanonical
	default:
		err = assign(v, val)
	}
	if err != nil {
		return codec.Invalid(err.Error())
	}
	return nil
}

// assign stores a decoded body (a map) into v: a pointer to one of the
// reply and push bodies the client receives, or to a map[string]any or an
// any.
func assign(v any, val any) error {
	if p, ok := v.(*any); ok {
		*p = val
		return nil
	}
	m, ok := val.(map[string]any)
	if !ok {
		return errors.New("body must be a map")
	}
	r := reader{m: m}
	switch b := v.(type) {
	case *map[string]any:
		*b = m
	case *rtm.PositionBody:
		r.str("position", &b.Position)
	case *rtm.ReadReply:
		r.str("position", &b.Position)
		b.Message = m["message"]
	case *rtm.PreviousReply:
		r.str("position", &b.Position)
		b.Previous = r.previous()
	case *rtm.PreviousError:
		r.str("error", &b.Error)
		r.str("reason", &b.Reason)
		b.Previous = r.previous()
	case *rtm.SubscribeReply:
		r.str("position", &b.Position)
		r.str("subscription_id", &b.SubscriptionID)
	case *rtm.UnsubscribeReply:
		r.str("position", &b.Position)
		r.str("subscription_id", &b.SubscriptionID)
	case *rtm.SubscriptionData:
		r.str("subscription_id", &b.SubscriptionID)
		r.str("channel", &b.Channel)
		r.str("position", &b.Position)
		r.list("messages", &b.Messages)
	case *rtm.SubscriptionInfo:
		r.str("info", &b.Info)
		r.str("reason", &b.Reason)
		r.str("position", &b.Position)
		r.str("subscription_id", &b.SubscriptionID)
		r.count("missed_message_count", &b.MissedMessageCount)
	case *rtm.SubscriptionError:
		r.str("error", &b.Error)
		r.str("reason", &b.Reason)
		r.str("position", &b.Position)
		r.str("subscription_id", &b.SubscriptionID)
		r.count("missed_message_count", &b.MissedMessageCount)
	case *rtm.ErrorBody:
		r.str("error", &b.Error)
		r.str("reason", &b.Reason)
		r.str("position", &b.Position)
		r.str("subscription_id", &b.SubscriptionID)
	case *rtm.PresenceReply:
		r.signed("users", &b.Users)
		r.signed("connections", &b.Connections)
		r.str("next", &b.Next)
		r.members("members", &b.Members)
	case *rtm.SubscriptionPresence:
		r.str("subscription_id", &b.SubscriptionID)
		r.str("event", &b.Event)
		r.flag("more", &b.More)
		r.signed("users", &b.Users)
		r.signed("connections", &b.Connections)
		r.members("members", &b.Members)
	case *rtm.HandshakeReply:
		var data map[string]any
		r.object("data", &data)
		d := reader{m: data, err: r.err}
		d.str("nonce", &b.Data.Nonce)
		return d.err
	default:
		return fmt.Errorf("%w: %T", errBodyType, v)
	}
	return r.err
}

// reader copies fields out of a decoded body, remembering the first one
// of the wrong type. An absent or null field leaves its destination
// unchanged, as in JSON. Its methods are kept out of line (go:noinline):
// inlined at each of their call sites they make sluice.wasm larger.
type reader struct {
	m   map[string]any
	err error
}

// get returns a field that is present and not null.
//
//go:noinline
func (r *reader) get(key string) (any, bool) {
	v, ok := r.m[key]
	return v, ok && v != nil && r.err == nil
}

//go:noinline
func (r *reader) wrong(key string, v any) {
	r.err = fmt.Errorf("body field %q has the wrong type (%T)", key, v)
}

//go:noinline
func (r *reader) str(key string, dst *string) {
	if v, ok := r.get(key); ok {
		if s, isStr := v.(string); isStr {
			*dst = s
		} else {
			r.wrong(key, v)
		}
	}
}

//go:noinline
func (r *reader) list(key string, dst *[]any) {
	if v, ok := r.get(key); ok {
		if a, isList := v.([]any); isList {
			*dst = a
		} else {
			r.wrong(key, v)
		}
	}
}

//go:noinline
func (r *reader) object(key string, dst *map[string]any) {
	if v, ok := r.get(key); ok {
		if o, isMap := v.(map[string]any); isMap {
			*dst = o
		} else {
			r.wrong(key, v)
		}
	}
}

// count reads a non-negative integer.
//
//go:noinline
func (r *reader) count(key string, dst *uint64) {
	if v, ok := r.get(key); ok {
		switch n := v.(type) {
		case int64:
			if n >= 0 {
				*dst = uint64(n)
				return
			}
		case uint64:
			*dst = n
			return
		}
		r.wrong(key, v)
	}
}

// previous reads the previous message of a reply to a request with read.
//
//go:noinline
func (r *reader) previous() *rtm.Previous {
	var m map[string]any
	r.object("previous", &m)
	if m == nil {
		return nil
	}
	p := &rtm.Previous{Message: m["message"]}
	pr := reader{m: m, err: r.err}
	pr.str("position", &p.Position)
	r.err = pr.err
	return p
}

// signed reads an integer that fits int64.
//
//go:noinline
func (r *reader) signed(key string, dst *int64) {
	var n uint64
	if v, ok := r.get(key); ok {
		if i, isInt := v.(int64); isInt {
			*dst = i
			return
		}
		r.count(key, &n)
		if r.err == nil {
			r.wrong(key, v) // above MaxInt64
		}
	}
}

//go:noinline
func (r *reader) flag(key string, dst *bool) {
	if v, ok := r.get(key); ok {
		if b, isBool := v.(bool); isBool {
			*dst = b
		} else {
			r.wrong(key, v)
		}
	}
}

// members reads presence members: maps of user_id, info and connections.
//
//go:noinline
func (r *reader) members(key string, dst *[]rtm.PresenceMember) {
	var list []any
	r.list(key, &list)
	if r.err != nil || list == nil {
		return
	}
	out := make([]rtm.PresenceMember, len(list))
	for i, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			r.wrong(key, v)
			return
		}
		mr := reader{m: m}
		mr.str("user_id", &out[i].UserID)
		out[i].Info = m["info"]
		mr.signed("connections", &out[i].Connections)
		if mr.err != nil {
			r.err = mr.err
			return
		}
	}
	*dst = out
}
