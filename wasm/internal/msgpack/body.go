package msgpack

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/shared/rtm"
)

// errBodyType reports a body type the client never sends or receives.
var errBodyType = errors.New("msgpack: body type not supported by the browser codec")

// bodyMap returns a request body as the map the wire carries, under the
// `json` names of its rtm struct, leaving out the omitempty fields that
// are empty. Only the bodies the client sends are known: a type switch
// costs a fraction of what mapping structs by reflection adds to
// sluice.wasm.
func bodyMap(body any) (map[string]any, error) {
	switch b := body.(type) {
	case *rtm.PublishBody:
		m := map[string]any{"channel": b.Channel, "message": b.Message}
		setString(m, "position", b.Position)
		setString(m, "read", b.Read)
		if b.TTL != nil {
			m["ttl"], m["ttl_message"] = *b.TTL, b.TTLMessage
		}
		if b.ExcludeSelf {
			m["exclude_self"] = true
		}
		return m, nil
	case *rtm.ChannelBody:
		m := map[string]any{"channel": b.Channel}
		setString(m, "read", b.Read)
		if b.Purge {
			m["purge"] = true
		}
		return m, nil
	case *rtm.ReadBody:
		m := map[string]any{"channel": b.Channel}
		setString(m, "position", b.Position)
		return m, nil
	case *rtm.SubscribeBody:
		return subscribeMap(b), nil
	case *rtm.UnsubscribeBody:
		return map[string]any{"subscription_id": b.SubscriptionID}, nil
	case *rtm.PresenceBody:
		m := map[string]any{"channel": b.Channel}
		setString(m, "after", b.After)
		if b.Limit != 0 {
			m["limit"] = b.Limit
		}
		return m, nil
	case *rtm.HandshakeBody:
		return map[string]any{"method": b.Method, "data": map[string]any{"role": b.Data.Role}}, nil
	case *rtm.AuthenticateBody:
		cred := map[string]any{}
		setString(cred, "hash", b.Credentials.Hash)
		setString(cred, "token", b.Credentials.Token)
		return map[string]any{"method": b.Method, "credentials": cred}, nil
	}
	return nil, fmt.Errorf("%w: %T", errBodyType, body)
}

// subscribeMap writes rtm/subscribe's body, every field omitempty.
func subscribeMap(b *rtm.SubscribeBody) map[string]any {
	m := map[string]any{}
	setString(m, "channel", b.Channel)
	setString(m, "subscription_id", b.SubscriptionID)
	setString(m, "position", b.Position)
	setString(m, "filter", b.Filter)
	if b.History != nil {
		h := map[string]any{}
		if b.History.Count != nil {
			h["count"] = *b.History.Count
		}
		if b.History.Age != nil {
			h["age"] = *b.History.Age
		}
		m["history"] = h
	}
	if b.FastForward {
		m["fast_forward"] = true
	}
	if b.Force {
		m["force"] = true
	}
	if b.Period != 0 {
		m["period"] = b.Period
	}
	setString(m, "only", b.Only)
	if b.Prefix {
		m["prefix"] = true
	}
	if b.Presence {
		m["presence"] = true
	}
	return m
}

// setString sets an omitempty string field.
func setString(m map[string]any, key, s string) {
	if s != "" {
		m[key] = s
	}
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
// unchanged, as in JSON.
type reader struct {
	m   map[string]any
	err error
}

// get returns a field that is present and not null.
func (r *reader) get(key string) (any, bool) {
	v, ok := r.m[key]
	return v, ok && v != nil && r.err == nil
}

func (r *reader) wrong(key string, v any) {
	r.err = fmt.Errorf("body field %q has the wrong type (%T)", key, v)
}

func (r *reader) str(key string, dst *string) {
	if v, ok := r.get(key); ok {
		if s, isStr := v.(string); isStr {
			*dst = s
		} else {
			r.wrong(key, v)
		}
	}
}

func (r *reader) list(key string, dst *[]any) {
	if v, ok := r.get(key); ok {
		if a, isList := v.([]any); isList {
			*dst = a
		} else {
			r.wrong(key, v)
		}
	}
}

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
