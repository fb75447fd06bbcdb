//go:build !js

package msgpack

import (
	"errors"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The fast paths of DecodeBody decode, with wire.Decoder instead of the
// library, the three bodies decoded most: rtm.SubscriptionData (each
// delivery a client receives), rtm.PublishBody (each publish the edge
// receives) and rtm.PositionBody (the acknowledgment of a publish). For
// every body they give what the library path (decodeLibraryBody) gives:
// the same struct, or an error with the same reason. Every build but the
// browser's takes them (library.go).
//
// They decode in one pass, checking as they go what each tier of
// decodeLibraryBody checks. When they find a failure, a scan of the whole
// body decides whether one of tier 1 comes first, as in
// decodeLibraryBody; tiers 2 to 4 have one reason each, and tier 5 is the
// same codec.NormalizeBody on the same values. Like the library they read
// a string field from nil (as "") or from binary, keep the last of a
// string field given twice, refuse keys other than strings, binary and
// nil, and skip unknown keys. They read Satori's options of a publish too
// (position, ttl, ttl_message, read): an integer field as the library
// reads an *int64 (see integer). A message field given twice goes to the
// library, whose handling of it (an error unless the values before the
// last are nil, in ways that depend on the earlier values) is not worth
// mirroring, and so does a destination that is not the zero value, which
// the library decodes into.

// errLibrary sends a body to the library path.
var errLibrary = errors.New("msgpack: body left to the library")

// decodeFast decodes body into v if v is a zero body of a type with a
// fast path, and returns errLibrary otherwise. A fast path decodes into
// the body itself and sets it back to zero when it fails before
// normalization, so that the library path, after errLibrary, decodes into
// a zero body too.
func decodeFast(body []byte, v any) error {
	switch b := v.(type) {
	case *rtm.SubscriptionData:
		if b != nil && b.SubscriptionID == "" && b.Channel == "" && b.Position == "" && b.Messages == nil {
			return decodeData(body, b)
		}
	case *rtm.PublishBody:
		if b != nil && b.Channel == "" && b.Message == nil && !b.HasFields() {
			return decodePublish(body, b)
		}
	case *rtm.PositionBody:
		if b != nil && b.Position == "" {
			return decodePosition(body, b)
		}
	}
	return errLibrary
}

func decodeData(body []byte, b *rtm.SubscriptionData) error {
	r := bodyReader{d: wire.NewDecoder(body)}
	err := r.fields(func(key []byte) error {
		switch string(key) {
		case "subscription_id":
			return r.text(&b.SubscriptionID)
		case "channel":
			return r.text(&b.Channel)
		case "position":
			return r.text(&b.Position)
		case "messages":
			return r.messages(&b.Messages)
		}
		return r.d.Skip(1)
	})
	if err = r.finish(body, err, b.SubscriptionID, b.Channel, b.Position); err != nil {
		*b = rtm.SubscriptionData{} // as it was, for the library path
		return err
	}
	return r.normalize(b, 2)
}

func decodePublish(body []byte, b *rtm.PublishBody) error {
	r := bodyReader{d: wire.NewDecoder(body)}
	err := r.fields(func(key []byte) error {
		switch string(key) {
		case "channel":
			return r.text(&b.Channel)
		case "message":
			return r.message(&b.Message, readMessage)
		case "position":
			return r.text(&b.Position)
		case "ttl":
			return r.integer(&b.TTL)
		case "ttl_message":
			return r.message(&b.TTLMessage, readTTLMessage)
		case "read":
			return r.text(&b.Read)
		case "exclude_self":
			// An extension, rare: the library decodes it.
			return errLibrary
		}
		return r.d.Skip(1)
	})
	if err = r.finish(body, err, b.Channel, b.Position, b.Read); err != nil {
		*b = rtm.PublishBody{} // as it was, for the library path
		return err
	}
	return r.normalize(b, 1)
}

func decodePosition(body []byte, b *rtm.PositionBody) error {
	var out rtm.PositionBody
	r := bodyReader{d: wire.NewDecoder(body)}
	err := r.fields(func(key []byte) error {
		if string(key) == "position" {
			return r.text(&out.Position)
		}
		return r.d.Skip(1)
	})
	if err := r.finish(body, err, out.Position); err != nil {
		return err
	}
	*b = out
	return nil
}

// bodyReader reads the map of a body for a fast path.
type bodyReader struct {
	d wire.Decoder
	// binary is set once a string field was given as binary, which the
	// library takes unchecked.
	binary bool
	// read has a bit set for each field of message values read (see once).
	read uint8
}

// The fields of message values a fast path reads, each at most once.
const (
	readMessage uint8 = 1 << iota
	readTTLMessage
	readMessages
)

// fields reads the body's map, calling field for each key to read its
// value, and then checks that nothing follows the map.
func (r *bodyReader) fields(field func(key []byte) error) error {
	k, pairs, err := r.d.Head()
	if err == nil && k != wire.KindMap {
		err = notMap()
	}
	for ; err == nil && pairs > 0; pairs-- {
		var key []byte
		if key, _, err = r.d.Key(); err == nil {
			err = field(key)
		}
	}
	if err == nil {
		err = r.d.End()
	}
	return err
}

// text reads a string field as the library does: from a string, from
// binary (checked by finish) or from nil, which is "".
func (r *bodyReader) text(dst *string) error {
	p, k, err := r.d.Key()
	if k == wire.KindBinary {
		r.binary = true
	}
	*dst = string(p)
	return err
}

// message reads the message of a publish, or its ttl_message: field.
func (r *bodyReader) message(dst *any, field uint8) error {
	if err := r.once(field); err != nil {
		return err
	}
	var err error
	*dst, err = r.d.Value(1)
	return err
}

// messages reads the messages of a subscription's data: an array, or nil.
func (r *bodyReader) messages(dst *[]any) error {
	if err := r.once(readMessages); err != nil {
		return err
	}
	k, n, err := r.d.Head()
	switch {
	case err != nil || k == wire.KindNil:
		return err
	case k != wire.KindArray:
		return wrongShape()
	}
	*dst, err = r.d.Array(n, 2)
	return err
}

// integer reads an *int64 field (a publish's ttl) as the library does:
// nil makes it nil, an integer of any width sets it, a uint64 above
// math.MaxInt64 wrapped around as the library wraps it, and anything
// else, a float too, is of the wrong type.
func (r *bodyReader) integer(dst **int64) error {
	k, n, err := r.d.Head()
	switch {
	case err != nil:
		return err
	case k == wire.KindNil:
		*dst = nil
		return nil
	case k != wire.KindInt && k != wire.KindUint:
		return wrongShape()
	}
	if *dst == nil {
		*dst = new(int64)
	}
	**dst = int64(n)
	return nil
}

// once marks field, a field of message values, read, or sends a body that
// gives it twice to the library.
func (r *bodyReader) once(field uint8) error {
	if r.read&field != 0 {
		return errLibrary
	}
	r.read |= field
	return nil
}

// finish returns the error decodeLibraryBody gives for body once its map has been
// read with err, given the final values of the body's string fields: tiers
// 1 to 3 for err (see refuse), then tier 4.
func (r *bodyReader) finish(body []byte, err error, texts ...string) error {
	switch {
	case errors.Is(err, errLibrary):
		return err
	case err != nil:
		return refuse(body, err)
	case r.binary:
		for _, s := range texts {
			if !utf8.ValidString(s) {
				return badStrings()
			}
		}
	}
	return nil
}

// refuse returns the error decodeLibraryBody gives for a body a fast path
// refused with err: the scan's, if the scan fails, since tier 1 comes
// first; otherwise err, which is of tier 2 or 3. wire.ErrKey is one of
// tier 3: a key or a string field of a kind the library cannot read into
// a string.
func refuse(body []byte, err error) error {
	if _, scanErr := scan(body); scanErr != nil {
		return malformed("body", scanErr)
	}
	var e *rtm.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, wire.ErrKey):
		return wrongShape()
	}
	// The decoder refused what the scan accepts: not expected, since it
	// checks items as the scan does.
	return malformed("body", err)
}

// normalize normalizes the messages of b, decoded into it by r at depth
// base (counting the body's map), when the decoder let through what
// normalization may refuse: tier 5. Otherwise they are canonical already,
// and nest at most codec.MaxDepth deep.
func (r *bodyReader) normalize(b rtm.ValueCarrier, base int) error {
	if r.d.NonCanonical() || r.d.Deepest() > base+codec.MaxDepth {
		return codec.NormalizeBody(b)
	}
	return nil
}

// scan checks that a body is one valid msgpack item within the limits of
// package wire, and reports whether it holds binary.
func scan(body []byte) (binary bool, err error) {
	var s wire.Scanner
	end, err := s.Skip(body, 0, 0)
	if err == nil && end != len(body) {
		err = wire.ErrExtra
	}
	return s.Binary, err
}

// notMap, wrongShape and badStrings are the reasons of tiers 2 to 4 of
// the library path (decodeLibraryBody), which the fast paths give too.
func notMap() *rtm.Error { return codec.Invalid("body must be a map") }

func wrongShape() *rtm.Error { return errWrongShape }

// errWrongShape is the one error of tier 3, which shaped looks for.
var errWrongShape = codec.ShapeFallback()

func badStrings() *rtm.Error { return codec.Invalid("body strings must be valid UTF-8") }
