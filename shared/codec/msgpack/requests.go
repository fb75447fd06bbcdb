package msgpack

import (
	"errors"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// errNotRequest reports a body the browser does not write: one a client
// never sends.
var errNotRequest = errors.New("msgpack: not the body of a request a client sends")

// appendRequest appends the body of a PDU a client sends, in the browser
// (see the package doc): byte for byte what the other builds write (the
// library, in the order of the struct's fields, the empty omitempty ones
// left out; a publish as codec.AppendBody writes it), without reflection.
// Like the library it does not check that strings are valid UTF-8, which
// strings from JavaScript always are; the edge refuses the others.
// A map is written as a message value, and nil, rtm.Empty or a nil pointer
// as an empty map. Bodies a client never sends are refused.
func appendRequest(dst []byte, body any) ([]byte, error) {
	switch b := body.(type) {
	case map[string]any, map[any]any:
		return wire.AppendValue(dst, b)
	}
	w := startFields(dst)
	switch b := body.(type) {
	case nil, rtm.Empty, *rtm.Empty:
	case *rtm.PublishBody:
		if b != nil {
			w.publish(b)
		}
	case *rtm.ChannelBody:
		if b != nil {
			w.str("channel", b.Channel)
			w.flag("purge", b.Purge)
			w.optStr("read", b.Read)
		}
	case *rtm.ReadBody:
		if b != nil {
			w.str("channel", b.Channel)
			w.optStr("position", b.Position)
		}
	case *rtm.SubscribeBody:
		if b != nil {
			w.subscribe(b)
		}
	case *rtm.UnsubscribeBody:
		if b != nil {
			w.str("subscription_id", b.SubscriptionID)
		}
	case *rtm.PresenceBody:
		if b != nil {
			w.str("channel", b.Channel)
			w.optStr("after", b.After)
			w.optInt("limit", b.Limit)
		}
	case *rtm.HandshakeBody:
		if b != nil {
			w.str("method", b.Method)
			w.key("data")
			data := startFields(w.dst)
			data.str("role", b.Data.Role)
			w.dst = data.dst
		}
	case *rtm.AuthenticateBody:
		if b != nil {
			w.str("method", b.Method)
			w.key("credentials")
			cred := startFields(w.dst)
			cred.optStr("hash", b.Credentials.Hash)
			cred.optStr("token", b.Credentials.Token)
			w.dst = cred.dst
		}
	default:
		return dst, &wrapError{msg: "msgpack: encode " + typeName(body) + " body: " + errNotRequest.Error(), err: errNotRequest}
	}
	if w.err != nil {
		return dst, w.err
	}
	return w.dst, nil
}

// publish writes a publish as codec.AppendBody does: its fields in the
// order of their names, the options only when set.
func (w *fields) publish(b *rtm.PublishBody) {
	w.str("channel", b.Channel)
	w.flag("exclude_self", b.ExcludeSelf)
	w.value("message", b.Message)
	w.optStr("position", b.Position)
	w.optStr("read", b.Read)
	if b.TTL != nil {
		w.key("ttl")
		w.dst = wire.AppendInt(w.dst, *b.TTL)
		w.value("ttl_message", b.TTLMessage)
	}
}

// subscribe writes rtm/subscribe's body, every field omitempty.
func (w *fields) subscribe(b *rtm.SubscribeBody) {
	w.optStr("channel", b.Channel)
	w.optStr("subscription_id", b.SubscriptionID)
	w.optStr("position", b.Position)
	if h := b.History; h != nil {
		w.key("history")
		hw := startFields(w.dst)
		hw.intPtr("count", h.Count)
		hw.intPtr("age", h.Age)
		w.dst = hw.dst
	}
	w.flag("fast_forward", b.FastForward)
	w.flag("force", b.Force)
	w.optStr("filter", b.Filter)
	w.optInt("period", b.Period)
	w.optInt("batch", b.Batch)
	w.optStr("only", b.Only)
	w.flag("prefix", b.Prefix)
	w.flag("presence", b.Presence)
	w.flag("delta", b.Delta)
}

// fields writes a body as a msgpack map of at most 15 pairs (a fixmap,
// as every request body is), counting the pairs in its header as they
// are added. It keeps the first error of a message value. Its methods are
// kept out of line (go:noinline): inlined at each of their call sites
// they make sluice.wasm 1 KB larger gzipped.
type fields struct {
	dst  []byte
	head int // index in dst of the map's header
	err  error
}

// startFields starts a map at the end of dst.
func startFields(dst []byte) fields {
	return fields{dst: append(dst, 0x80), head: len(dst)}
}

// key starts a pair.
//
//go:noinline
func (w *fields) key(k string) {
	w.dst[w.head]++
	w.dst = wire.AppendString(w.dst, k)
}

// str writes a string field.
//
//go:noinline
func (w *fields) str(k, s string) {
	w.key(k)
	w.dst = wire.AppendString(w.dst, s)
}

// optStr writes an omitempty string field.
//
//go:noinline
func (w *fields) optStr(k, s string) {
	if s != "" {
		w.str(k, s)
	}
}

// flag writes an omitempty bool field.
//
//go:noinline
func (w *fields) flag(k string, b bool) {
	if b {
		w.key(k)
		w.dst = wire.AppendBool(w.dst, true)
	}
}

// optInt writes an omitempty integer field.
//
//go:noinline
func (w *fields) optInt(k string, n int64) {
	if n != 0 {
		w.key(k)
		w.dst = wire.AppendInt(w.dst, n)
	}
}

// intPtr writes an omitempty *int64 field.
//
//go:noinline
func (w *fields) intPtr(k string, n *int64) {
	if n != nil {
		w.key(k)
		w.dst = wire.AppendInt(w.dst, *n)
	}
}

// value writes a field holding a message value.
//
//go:noinline
func (w *fields) value(k string, v any) {
	if w.err == nil {
		w.key(k)
		w.dst, w.err = wire.AppendValue(w.dst, v)
	}
}
