package codec

import "github.com/sluicehq/sluice/shared/rtm"

// The presence bodies carry members' info, message values, so they are
// written by hand like the other bodies with messages: their maps then
// come out in SortedKeys order in every codec, where the libraries would
// write them in map order.

// pairs writes a body field by field: it numbers the pairs and keeps the
// first error, so that a body reads as a list of its fields.
type pairs[P Primitives] struct {
	p   P
	dst []byte
	i   int
	err error
}

func (w *pairs[P]) key(k string) bool {
	if w.err != nil {
		return false
	}
	w.dst, w.err = w.p.AppendMapKey(w.dst, w.i, k)
	w.i++
	return w.err == nil
}

func (w *pairs[P]) text(k, s string) {
	if w.key(k) {
		w.dst = w.p.AppendText(w.dst, s)
	}
}

func (w *pairs[P]) int(k string, n int64) {
	if w.key(k) {
		w.dst = w.p.AppendInt(w.dst, n)
	}
}

func (w *pairs[P]) members(ms []rtm.PresenceMember) {
	if !w.key("members") {
		return
	}
	w.dst = w.p.AppendArrayStart(w.dst, len(ms))
	for i := range ms {
		w.dst = w.p.AppendArrayItem(w.dst, i)
		if w.dst, w.err = appendMember(w.dst, w.p, &ms[i]); w.err != nil {
			return
		}
	}
	w.dst = w.p.AppendArrayEnd(w.dst)
}

// appendMember writes one member, leaving out a nil info and a zero count
// as the struct's omitempty tags say.
func appendMember[P Primitives](dst []byte, p P, m *rtm.PresenceMember) ([]byte, error) {
	n := 1
	if m.Info != nil {
		n++
	}
	if m.Connections != 0 {
		n++
	}
	w := pairs[P]{p: p, dst: p.AppendMapStart(dst, n)}
	w.text("user_id", m.UserID)
	if m.Info != nil && w.key("info") {
		w.dst, w.err = appendValue(w.dst, m.Info, p, 0)
	}
	if m.Connections != 0 {
		w.int("connections", m.Connections)
	}
	if w.err != nil {
		return w.dst, w.err
	}
	return p.AppendMapEnd(w.dst), nil
}

func appendPresenceReply[P Primitives](dst []byte, p P, b *rtm.PresenceReply) ([]byte, error) {
	n := 3
	if b.Next != "" {
		n++
	}
	w := pairs[P]{p: p, dst: p.AppendMapStart(dst, n)}
	w.int("users", b.Users)
	w.int("connections", b.Connections)
	w.members(b.Members)
	if b.Next != "" {
		w.text("next", b.Next)
	}
	if w.err != nil {
		return w.dst, w.err
	}
	return p.AppendMapEnd(w.dst), nil
}

func appendSubscriptionPresence[P Primitives](dst []byte, p P, b *rtm.SubscriptionPresence) ([]byte, error) {
	n := 5
	if b.More {
		n++
	}
	w := pairs[P]{p: p, dst: p.AppendMapStart(dst, n)}
	w.text("subscription_id", b.SubscriptionID)
	w.text("event", b.Event)
	w.members(b.Members)
	if b.More && w.key("more") {
		w.dst = p.AppendBool(w.dst, true)
	}
	w.int("users", b.Users)
	w.int("connections", b.Connections)
	if w.err != nil {
		return w.dst, w.err
	}
	return p.AppendMapEnd(w.dst), nil
}
