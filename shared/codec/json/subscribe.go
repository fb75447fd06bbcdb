package json

import "github.com/sluicehq/sluice/shared/rtm"

// subscribeZero reports whether every field of b the fast path knows is
// zero.
func subscribeZero(b *rtm.SubscribeBody) bool {
	return b.Channel == "" && b.SubscriptionID == "" && b.Position == "" && b.History == nil &&
		!b.FastForward && !b.Force && b.Filter == "" && b.Period == 0 && b.Batch == 0 && !b.Delta
}

// Bits of the keys of a subscribe body.
const (
	subChannel uint = 1 << iota
	subID
	subPosition
	subHistory
	subFastForward
	subForce
	subFilter
	subPeriod
	subBatch
	subDelta
)

func (p *parser) subscribe(b *rtm.SubscribeBody) error {
	var out rtm.SubscribeBody
	var seen uint
	for n := 0; ; n++ {
		key, ok, err := p.keys(n)
		if err != nil || !ok {
			if err == nil {
				setSubscribe(b, &out)
			}
			return err
		}
		switch string(key) {
		case "channel":
			err = p.onceText(&seen, subChannel, &out.Channel)
		case "subscription_id":
			err = p.onceText(&seen, subID, &out.SubscriptionID)
		case "position":
			err = p.onceText(&seen, subPosition, &out.Position)
		case "filter":
			err = p.onceText(&seen, subFilter, &out.Filter)
		case "history":
			if err = once(&seen, subHistory); err == nil {
				err = p.history(&out.History)
			}
		case "fast_forward":
			err = p.onceBool(&seen, subFastForward, &out.FastForward)
		case "force":
			err = p.onceBool(&seen, subForce, &out.Force)
		case "period":
			err = p.onceInt(&seen, subPeriod, &out.Period)
		case "batch":
			err = p.onceInt(&seen, subBatch, &out.Batch)
		case "delta":
			err = p.onceBool(&seen, subDelta, &out.Delta)
		default:
			err = errLibrary
		}
		if err != nil {
			return err
		}
	}
}

// setSubscribe sets the fields of b the fast path knows, leaving the
// others as they are.
func setSubscribe(b, out *rtm.SubscribeBody) {
	b.Channel, b.SubscriptionID, b.Position, b.History = out.Channel, out.SubscriptionID, out.Position, out.History
	b.FastForward, b.Force, b.Filter, b.Period, b.Batch = out.FastForward, out.Force, out.Filter, out.Period, out.Batch
	b.Delta = out.Delta
}

// history reads the history of a subscribe: an object of count and age,
// or null, which leaves it nil.
func (p *parser) history(dst **rtm.History) error {
	if p.peek() == 'n' {
		return p.literal("null")
	}
	if err := p.openObject(); err != nil {
		return err
	}
	var h rtm.History
	var seen uint
	for n := 0; ; n++ {
		key, ok, err := p.nextKey(n)
		if err != nil || !ok {
			if err == nil {
				*dst = &h
			}
			return err
		}
		switch string(key) {
		case "count":
			if err = once(&seen, 1); err == nil {
				err = p.optionalInt(&h.Count)
			}
		case "age":
			if err = once(&seen, 2); err == nil {
				err = p.optionalInt(&h.Age)
			}
		default:
			err = errLibrary
		}
		if err != nil {
			return err
		}
	}
}

// optionalInt reads an integer behind a pointer: null leaves it nil.
func (p *parser) optionalInt(dst **int64) error {
	if p.peek() == 'n' {
		return p.literal("null")
	}
	n, err := p.integer()
	if err != nil {
		return err
	}
	*dst = &n
	return nil
}

// onceBool reads a bool field that may come once: true, false, or null,
// which leaves it false.
func (p *parser) onceBool(seen *uint, bit uint, dst *bool) error {
	if err := once(seen, bit); err != nil {
		return err
	}
	switch p.peek() {
	case 't':
		*dst = true
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	}
	return errLibrary
}

// onceInt reads an integer field that may come once; null leaves it 0.
func (p *parser) onceInt(seen *uint, bit uint, dst *int64) error {
	if err := once(seen, bit); err != nil {
		return err
	}
	if p.peek() == 'n' {
		return p.literal("null")
	}
	n, err := p.integer()
	*dst = n
	return err
}
