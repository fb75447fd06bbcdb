package msgpack

import (
	"errors"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// This file is the codec's one body decoder, on every build: the edge
// reads the requests of its clients with it, and the browser and the Go
// client the replies and pushes of the edge. It reads a body in one pass
// with wire.Decoder, each field straight into its place in the body's
// struct (see the tables of bodies.go), without reflection, a library or
// an intermediate map; the body's messages come out in the canonical
// model as they are read.
//
// A body that is not as its type needs is refused with the reason of
// package rtm for its first fault, in this order: (1) the body is not
// valid msgpack (the whole body is checked, so that this comes first
// wherever it is), (2) it is not a map, or a key is not a string,
// binary or nil, (3) a field holds a value of the wrong kind (the first
// such field in the order the struct declares them, as package
// codec/internal/shape reports it for the other codecs), (4) a field is
// given twice, (5) a string field given as binary is not valid UTF-8, and
// (6) a message is not in the data model (normalization).
//
// As in the other codecs, null leaves a field as it is (a message field
// becomes null), keys no field has are skipped, and a string field may
// also be given as binary, which some encoders write strings as. Map keys
// may be strings, binary or nil (""), as wire.Decoder reads them; in a
// message a key given twice keeps its last value.

// errBodyType reports a destination that is not a body type of package
// rtm: a bug of the caller, never an input's fault.
var errBodyType = errors.New("msgpack: not a body type of package rtm")

// decodeBody is DecodeBody.
func decodeBody(body []byte, v any) error {
	r := bodyReader{d: wire.NewDecoder(body)}
	var err error
	switch b := v.(type) {
	case *any:
		*b, err = r.message(0, 0)
	case *map[string]any:
		err = r.generic(b)
	case *rtm.BodyKeys:
		err = r.keys(b)
	default:
		t, p, ok := tableOf(v)
		if !ok {
			return &wrapError{msg: errBodyType.Error() + ": " + typeName(v), err: errBodyType}
		}
		err = r.body(t, p)
	}
	if err == nil {
		err = r.d.End()
	}
	if err != nil {
		return refuse(body, err)
	}
	if r.faulty {
		return r.fault()
	}
	return nil
}

// bodyReader reads one body, keeping the faults it goes on reading after
// (tiers 3 to 6) to report the first once the whole body is read.
type bodyReader struct {
	d wire.Decoder
	// faulty is set with any of the faults below.
	faulty bool
	// wrong is the field of the wrong kind that comes first.
	wrong struct {
		order       int // 0: none; see object
		parent, key string
		kind        rtm.ValueKind
	}
	twice   bool // a field was given twice
	badText bool // a string field was binary that is not UTF-8
	// model is the first message outside the data model.
	model struct {
		order int // see object; 0 for the body itself (an any or a map)
		err   error
	}
}

// fault returns the error of the first fault of tiers 3 to 6, if any.
func (r *bodyReader) fault() error {
	switch {
	case r.wrong.order != 0:
		path := r.wrong.key
		if r.wrong.parent != "" {
			path = r.wrong.parent + "." + path
		}
		return rtm.FieldType(path, r.wrong.kind)
	case r.twice:
		return rtm.Invalid(rtm.BodyKeyTwice)
	case r.badText:
		return rtm.Invalid(rtm.BodyNotUTF8)
	}
	return r.model.err
}

// refuse returns the error for a body that the reader stopped at with
// err: that it is not valid msgpack if any of it is not, which comes
// first; otherwise err, of tier 2.
func refuse(body []byte, err error) error {
	if scanErr := scan(body); scanErr != nil {
		return malformed(rtm.PartBody, scanErr)
	}
	if e, ok := rtm.AsError(err); ok {
		return e
	}
	// The decoder refused what the scan accepts: not expected, since it
	// checks items as the scan does.
	return malformed(rtm.PartBody, err)
}

// scan checks that a body is one valid msgpack item within the limits of
// package wire.
func scan(body []byte) error {
	var s wire.Scanner
	end, err := s.Skip(body, 0, 0)
	if err == nil && end != len(body) {
		err = wire.ErrExtra
	}
	return err
}

// body reads a body's map into the fields of t in the struct at p.
func (r *bodyReader) body(t *table, p unsafe.Pointer) error {
	k, err := r.d.Peek()
	if err == nil && k != wire.KindMap {
		err = rtm.Invalid(rtm.BodyNotMap)
	}
	if err != nil {
		return err
	}
	return r.object(t, p, 1, 0, 8, "")
}

// object reads a map, depth containers deep counting itself, into the
// fields of t in the struct at p: a body (parent ""), or a struct in one,
// the field parent of the body.
//
// The order of a field, which says which of two faults comes first, is
// its index in t counted from 1, shifted left by shift (8 for a body's
// fields, 0 for a struct's), or'd with base, its parent's order: so a
// struct's fields come in their parent's place.
func (r *bodyReader) object(t *table, p unsafe.Pointer, depth, base int, shift uint, parent string) error {
	_, pairs, err := r.d.Head()
	var seen uint16
	for ; err == nil && pairs > 0; pairs-- {
		var key []byte
		if key, _, err = r.d.Key(); err != nil {
			if err == wire.ErrKey {
				err = rtm.Invalid(rtm.BodyKeyType)
			}
			break
		}
		i := t.find(key)
		if i < 0 {
			err = r.d.Skip(depth)
			continue
		}
		bit := uint16(1) << i
		if seen&bit != 0 {
			r.twice, r.faulty = true, true
		}
		seen |= bit
		order := base | (i+1)<<shift
		err = r.field(&t.fields[i], unsafe.Add(p, t.fields[i].off), depth, order, parent)
	}
	return err
}

// field reads the value of f, a field of a map depth containers deep, into
// the field at p, or notes it as a fault.
func (r *bodyReader) field(f *field, p unsafe.Pointer, depth, order int, parent string) error {
	k, err := r.d.Peek()
	switch {
	case err != nil:
		return err
	case f.kind == kindMessage:
		*(*any)(p), err = r.message(depth, order)
		return err
	case k == wire.KindNil: // leaves the field as it is
		_, _, err = r.d.Head()
		return err
	case accepts[f.kind]&(1<<k) == 0:
		r.wrongKind(order, parent, f.key, kindOf(k))
		return r.d.Skip(depth)
	}
	switch f.kind {
	case kindText:
		return r.text((*string)(p), k)
	case kindFlag:
		_, n, err := r.d.Head()
		*(*bool)(p) = n == 1
		return err
	case kindInt, kindIntPtr, kindCount:
		return r.integer(f.kind, p, order, parent, f.key)
	case kindMessages:
		return r.messages((*[]any)(p), depth+1, order)
	case kindMembers:
		return r.members((*[]rtm.PresenceMember)(p), depth+1, order, f.key)
	case kindStructPtr:
		ptr := (*unsafe.Pointer)(p)
		if *ptr == nil {
			*ptr = f.sub.alloc()
		}
		p = *ptr
	}
	return r.object(f.sub, p, depth+1, order, 0, f.key)
}

// accepts holds, for each field kind but kindMessage, a bit for each
// kind of value (not nil) it takes; integer checks an integer's range.
var accepts = [...]uint16{
	kindText:      1<<wire.KindString | 1<<wire.KindBinary,
	kindFlag:      1 << wire.KindBool,
	kindInt:       1<<wire.KindInt | 1<<wire.KindUint,
	kindIntPtr:    1<<wire.KindInt | 1<<wire.KindUint,
	kindCount:     1<<wire.KindInt | 1<<wire.KindUint,
	kindMessages:  1 << wire.KindArray,
	kindMembers:   1 << wire.KindArray,
	kindStruct:    1 << wire.KindMap,
	kindStructPtr: 1 << wire.KindMap,
}

// wrongKind notes a field of the wrong kind, unless one that comes
// before it was noted.
func (r *bodyReader) wrongKind(order int, parent, key string, kind rtm.ValueKind) {
	w := &r.wrong
	if w.order == 0 || order < w.order {
		w.order, w.parent, w.key, w.kind = order, parent, key, kind
	}
	r.faulty = true
}

// kindOf names kind k in a reason.
func kindOf(k wire.Kind) rtm.ValueKind {
	switch k {
	case wire.KindBool:
		return rtm.KindBool
	case wire.KindInt, wire.KindUint, wire.KindFloat32, wire.KindFloat64:
		return rtm.KindNumber
	case wire.KindString:
		return rtm.KindString
	case wire.KindBinary:
		return rtm.KindBinary
	case wire.KindArray:
		return rtm.KindArray
	case wire.KindMap:
		return rtm.KindMap
	}
	return rtm.KindValue
}

// text reads a string field, of kind k: a string, or binary, which must
// be valid UTF-8.
func (r *bodyReader) text(dst *string, k wire.Kind) error {
	p, _, err := r.d.Key()
	if k == wire.KindBinary && !utf8.Valid(p) {
		r.badText, r.faulty = true, true
	}
	*dst = string(p)
	return err
}

// integer reads an integer field of kind fk at p, noting a value out of
// its range as a fault.
func (r *bodyReader) integer(fk fieldKind, p unsafe.Pointer, order int, parent, key string) error {
	k, n, err := r.d.Head()
	if err != nil {
		return err
	}
	// n holds an int64's bits for KindInt, a uint64 for KindUint.
	negative, big := k == wire.KindInt && int64(n) < 0, k == wire.KindUint && n > math.MaxInt64
	switch {
	case fk == kindInt && !big:
		*(*int64)(p) = int64(n)
	case fk == kindIntPtr && !big:
		dst := (**int64)(p)
		if *dst == nil {
			*dst = new(int64)
		}
		**dst = int64(n)
	case fk == kindCount && !negative:
		*(*uint64)(p) = n
	default:
		r.wrongKind(order, parent, key, rtm.KindOutOfRange)
	}
	return nil
}

// message reads a message, depth containers deep counting the map it is
// in, in the canonical model; see canonical.
func (r *bodyReader) message(depth, order int) (any, error) {
	v, err := r.d.Value(depth)
	if err != nil {
		return nil, messageError(err)
	}
	if r.d.NonCanonical() || r.d.Deepest() > depth+codec.MaxDepth {
		v = r.canonical(v, order)
	}
	return v, nil
}

// messages reads the messages of a subscription's data: an array, depth
// containers deep, each item a message.
func (r *bodyReader) messages(dst *[]any, depth, order int) error {
	_, n, err := r.d.Head()
	if err == nil {
		*dst, err = r.d.Array(n, depth)
	}
	if err != nil {
		return messageError(err)
	}
	if r.d.NonCanonical() || r.d.Deepest() > depth+codec.MaxDepth {
		for i, m := range *dst {
			(*dst)[i] = r.canonical(m, order)
		}
	}
	return nil
}

// canonical returns message v normalized, for the decoder let through
// something the data model refuses (see wire.Decoder.NonCanonical), or
// nesting that may be too deep, and notes a refusal as a fault of the
// field at order. The decoder's marks stay set, so a later message is
// normalized too, needlessly but rightly; only bodies that are refused
// pay for it.
func (r *bodyReader) canonical(v any, order int) any {
	v, err := codec.Normalize(v)
	if m := &r.model; err != nil && (m.err == nil || order < m.order) {
		m.order, m.err = order, err
		r.faulty = true
	}
	return v
}

// messageError words the one error of wire.Decoder that is the fault of
// a message rather than of the format: a map key that is not a string.
func messageError(err error) error {
	if err == wire.ErrKey {
		return rtm.Invalid(rtm.MessageKeyType)
	}
	return err
}

// members reads the members of a presence reply or push: an array,
// depth containers deep, of maps.
func (r *bodyReader) members(dst *[]rtm.PresenceMember, depth, order int, key string) error {
	_, n, err := r.d.Head()
	if err == nil && n > uint64(r.d.Remaining()) {
		err = wire.ErrTruncated // each takes at least a byte: no forged length
	}
	if err != nil {
		return err
	}
	out := make([]rtm.PresenceMember, n)
	for i := range out {
		k, err := r.d.Peek()
		switch {
		case err != nil:
		case k == wire.KindMap:
			err = r.object(&presenceMember, unsafe.Pointer(&out[i]), depth+1, order, 0, key)
		case k == wire.KindNil: // a zero member
			_, _, err = r.d.Head()
		default:
			r.wrongKind(order, "", key, kindOf(k))
			err = r.d.Skip(depth)
		}
		if err != nil {
			return err
		}
	}
	*dst = out
	return nil
}

// generic reads a body into a map.
func (r *bodyReader) generic(dst *map[string]any) error {
	k, err := r.d.Peek()
	if err == nil && k != wire.KindMap {
		err = rtm.Invalid(rtm.BodyNotMap)
	}
	if err != nil {
		return err
	}
	v, err := r.message(0, 0)
	if err == nil {
		*dst, _ = v.(map[string]any) // nil when normalization refused it
	}
	return err
}

// keys reads the keys of a body, skipping its values.
func (r *bodyReader) keys(dst *rtm.BodyKeys) error {
	k, pairs, err := r.d.Head()
	if err == nil && k != wire.KindMap {
		err = rtm.Invalid(rtm.BodyNotMap)
	}
	if err == nil && *dst == nil {
		*dst = make(rtm.BodyKeys)
	}
	for ; err == nil && pairs > 0; pairs-- {
		var key []byte
		if key, _, err = r.d.Key(); err == wire.ErrKey {
			err = rtm.Invalid(rtm.BodyKeyType)
		}
		if err == nil {
			(*dst)[string(key)] = rtm.Present{}
			err = r.d.Skip(1)
		}
	}
	return err
}
