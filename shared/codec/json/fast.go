package json

import (
	"github.com/sluicehq/sluice/shared/rtm"
)

// The fast paths of DecodeBody decode the bodies of the requests an edge
// serves most (rtm/publish and rtm/write, rtm/delete, rtm/read,
// rtm/subscribe, rtm/unsubscribe) and those a client receives most
// (rtm/subscription/data, the acknowledgment of a publish, the reply to a
// read), in one pass with a parser instead of encoding/json's reflection.
//
// For every body they give what the library path gives, or leave the
// body to it: any key they do not know (including the fields a newer
// body type adds, which the library then decodes), a key written with
// escapes or given twice, a value of the wrong type, any syntax error and
// anything else they are unsure of sends the whole body to the library
// path, so errors keep their codes and reasons without the fast paths
// repeating them. They fill only the fields they know, and only once the
// whole body has decoded, and only into a body whose fields they know are
// zero, as the library decodes into what is there.

// decodeFast decodes body into v if v is a zero body of a type with a
// fast path, and returns errLibrary otherwise.
func decodeFast(body []byte, v any) error {
	p := parser{b: body}
	switch b := v.(type) {
	case *rtm.PublishBody:
		if b != nil && b.Channel == "" && b.Message == nil {
			p.shared = true
			return p.publish(b)
		}
	case *rtm.ChannelBody:
		if b != nil && b.Channel == "" {
			return p.channel(b)
		}
	case *rtm.ReadBody:
		if b != nil && b.Channel == "" && b.Position == "" {
			return p.read(b)
		}
	case *rtm.SubscribeBody:
		if b != nil && subscribeZero(b) {
			return p.subscribe(b)
		}
	case *rtm.UnsubscribeBody:
		if b != nil && b.SubscriptionID == "" {
			return p.text1("subscription_id", &b.SubscriptionID)
		}
	case *rtm.PositionBody:
		if b != nil && b.Position == "" {
			return p.text1("position", &b.Position)
		}
	case *rtm.ReadReply:
		if b != nil && b.Position == "" && b.Message == nil {
			p.shared = true
			return p.readReply(b)
		}
	case *rtm.SubscriptionData:
		if b != nil && b.SubscriptionID == "" && b.Position == "" && b.Messages == nil && !b.Delta {
			p.shared = true
			return p.data(b)
		}
	}
	return errLibrary
}

// keys reads the keys of a body's object: the next key, or ok false at
// its end once only space follows the object. n is the number of keys
// read before; each key may come once, and seen keeps the bits once
// sets.
// object reads an object's keys, calling field for each to read its value;
// the first error ends it (errLibrary: a key the fast path leaves to the
// library path).
func (p *parser) object(field func(key []byte) error) error {
	for n := 0; ; n++ {
		key, ok, err := p.keys(n)
		if err != nil || !ok {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

func (p *parser) keys(n int) (key []byte, ok bool, err error) {
	if n == 0 {
		if err := p.openObject(); err != nil {
			return nil, false, err
		}
	}
	if key, ok, err = p.nextKey(n); err != nil || ok {
		return key, ok, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, false, errLibrary // extra data
	}
	return nil, false, nil
}

// once marks the key of bit seen, or leaves a key given twice to the
// library (which refuses it, after decoding).
func once(seen *uint, bit uint) error {
	if *seen&bit != 0 {
		return errLibrary
	}
	*seen |= bit
	return nil
}

// onceText reads a string field that may come once.
func (p *parser) onceText(seen *uint, bit uint, dst *string) error {
	if err := once(seen, bit); err != nil {
		return err
	}
	return p.textOrNull(dst)
}

// onceValue reads a message value that may come once.
func (p *parser) onceValue(seen *uint, bit uint, dst *any) error {
	if err := once(seen, bit); err != nil {
		return err
	}
	var err error
	*dst, err = p.value(0)
	return err
}

func (p *parser) publish(b *rtm.PublishBody) error {
	return p.textAndValue("channel", &b.Channel, "message", &b.Message)
}

// textAndValue decodes a body of a text under textKey and a value under
// valueKey (publish, read's reply), each at most once, into text and
// value, which it leaves as they were unless the whole body decodes.
func (p *parser) textAndValue(textKey string, text *string, valueKey string, value *any) error {
	var t string
	var v any
	var seen uint
	err := p.object(func(key []byte) error {
		switch {
		case string(key) == textKey:
			return p.onceText(&seen, 1, &t)
		case string(key) == valueKey:
			return p.onceValue(&seen, 2, &v)
		}
		return errLibrary
	})
	if err == nil {
		*text, *value = t, v
	}
	return err
}

func (p *parser) channel(b *rtm.ChannelBody) error {
	var out rtm.ChannelBody
	var seen uint
	for n := 0; ; n++ {
		key, ok, err := p.keys(n)
		if err != nil || !ok {
			if err == nil {
				b.Channel = out.Channel
			}
			return err
		}
		if string(key) != "channel" {
			return errLibrary
		}
		if err := p.onceText(&seen, 1, &out.Channel); err != nil {
			return err
		}
	}
}

func (p *parser) read(b *rtm.ReadBody) error {
	var out rtm.ReadBody
	var seen uint
	err := p.object(func(key []byte) (err error) {
		switch string(key) {
		case "channel":
			err = p.onceText(&seen, 1, &out.Channel)
		case "position":
			err = p.onceText(&seen, 2, &out.Position)
		default:
			err = errLibrary
		}
		return err
	})
	if err == nil {
		b.Channel, b.Position = out.Channel, out.Position
	}
	return err
}

// text1 reads a body of one string field, named name, into dst, which it
// sets only once the whole body has decoded.
func (p *parser) text1(name string, dst *string) error {
	var out string
	var seen uint
	err := p.object(func(key []byte) error {
		if string(key) != name {
			return errLibrary
		}
		return p.onceText(&seen, 1, &out)
	})
	if err == nil {
		*dst = out
	}
	return err
}

func (p *parser) readReply(b *rtm.ReadReply) error {
	return p.textAndValue("position", &b.Position, "message", &b.Message)
}

func (p *parser) data(b *rtm.SubscriptionData) error {
	var out rtm.SubscriptionData
	var seen uint
	err := p.object(func(key []byte) (err error) {
		switch string(key) {
		case "subscription_id":
			err = p.onceText(&seen, 1, &out.SubscriptionID)
		case "position":
			err = p.onceText(&seen, 2, &out.Position)
		case "messages":
			if err = once(&seen, 4); err == nil {
				err = p.messages(&out.Messages)
			}
		case "delta":
			err = p.onceBool(&seen, 8, &out.Delta)
		default:
			err = errLibrary
		}
		return err
	})
	if err == nil {
		b.SubscriptionID, b.Position, b.Messages, b.Delta = out.SubscriptionID, out.Position, out.Messages, out.Delta
	}
	return err
}

// messages reads the messages of a subscription's data: an array, or
// null, which leaves them nil.
func (p *parser) messages(dst *[]any) error {
	switch p.peek() {
	case 'n':
		return p.literal("null")
	case '[':
		// Each message is at depth 0, as codec.NormalizeBody normalizes
		// them one by one, so the array is at -1.
		a, err := p.arrayValue(-1)
		if err == nil {
			*dst = a.([]any)
		}
		return err
	}
	return errLibrary
}
