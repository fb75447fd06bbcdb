package cbor

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Major types of CBOR.
const (
	majorUint  = 0
	majorNeg   = 1
	majorBytes = 2
	majorText  = 3
	majorArray = 4
	majorMap   = 5
	majorTag   = 6
	majorOther = 7
)

// head reads the initial byte and argument of the item at b[i]. It returns
// ok false for a truncated head or an indefinite length, which Wellformed
// has already refused; the checks keep a bug from becoming a panic.
func head(b []byte, i int) (major byte, arg uint64, next int, ok bool) {
	if i >= len(b) {
		return 0, 0, 0, false
	}
	major, ai := b[i]>>5, b[i]&0x1f
	i++
	var n int
	switch {
	case ai < 24:
		return major, uint64(ai), i, true
	case ai == 24:
		n = 1
	case ai == 25:
		n = 2
	case ai == 26:
		n = 4
	case ai == 27:
		n = 8
	default:
		return 0, 0, 0, false
	}
	if len(b)-i < n {
		return 0, 0, 0, false
	}
	for _, c := range b[i : i+n] {
		arg = arg<<8 | uint64(c)
	}
	return major, arg, i + n, true
}

// skip returns the index just past the well-formed item at b[i].
func skip(b []byte, i int) (int, bool) {
	major, arg, i, ok := head(b, i)
	if !ok {
		return 0, false
	}
	switch major {
	case majorBytes, majorText:
		if arg > uint64(len(b)-i) {
			return 0, false
		}
		return i + int(arg), true
	case majorArray, majorMap:
		if major == majorMap {
			arg *= 2 // arg <= MaxElements, checked by Wellformed
		}
		for ; arg > 0 && ok; arg-- {
			i, ok = skip(b, i)
		}
		return i, ok
	case majorTag:
		return skip(b, i)
	}
	return i, true
}

// decodeEnvelope reads the top-level map of a well-formed frame.
func decodeEnvelope(f []byte) (rtm.Envelope, error) {
	var env rtm.Envelope
	major, pairs, i, ok := head(f, 0)
	if !ok || major != majorMap {
		return env, rtm.Invalid(rtm.PDUNotMap)
	}
	var seen struct{ action, id, body bool }
	for ; pairs > 0; pairs-- {
		km, kl, ks, ok := head(f, i)
		if !ok || km != majorText || kl > uint64(len(f)-ks) {
			return env, rtm.Invalid(rtm.PDUKeyType)
		}
		vs := ks + int(kl)
		end, ok := skip(f, vs)
		if !ok {
			return env, rtm.Invalid(rtm.PDUTruncated)
		}
		var err error
		switch string(f[ks:vs]) {
		case "action":
			err = codec.Once(&seen.action)
			if err == nil {
				env.Action, err = text(f[vs:end], true)
			}
		case "id":
			err = codec.Once(&seen.id)
			if err == nil {
				err = decodeID(&env.ID, f[vs:end])
			}
		case "body":
			err = codec.Once(&seen.body)
			if m, _, _, _ := head(f, vs); err == nil && m != majorMap {
				err = rtm.Invalid(rtm.PDUBodyType)
			}
			env.Body = f[vs:end]
		}
		if err != nil {
			return rtm.Envelope{}, err
		}
		i = end
	}
	if !seen.action {
		return rtm.Envelope{}, rtm.Invalid(rtm.PDUNoAction)
	}
	if !seen.body {
		env.Body = emptyBody
	}
	return env, nil
}

// text returns the text string item v; anything else is invalid_format.
func text(v []byte, action bool) (string, error) {
	major, n, i, ok := head(v, 0)
	if !ok || major != majorText || n != uint64(len(v)-i) {
		return "", rtm.Invalid(rtm.PDUActionType)
	}
	s := v[i:]
	if !utf8.Valid(s) {
		return "", rtm.Invalid(rtm.PDUNotUTF8)
	}
	if action {
		return codec.Action(s), nil
	}
	return string(s), nil
}

// decodeID keeps the id's type: an integer that fits an int64 or a text
// string; anything else cannot be echoed faithfully.
func decodeID(id *rtm.ID, v []byte) error {
	major, arg, _, ok := head(v, 0)
	switch {
	case ok && major == majorUint && arg <= math.MaxInt64:
		*id = rtm.IntID(int64(arg))
	case ok && major == majorNeg && arg <= math.MaxInt64:
		*id = rtm.IntID(^int64(arg)) // -1 - arg
	case ok && major == majorText:
		s, err := text(v, false)
		if err != nil {
			return err
		}
		*id = rtm.StringID(s)
	default:
		return rtm.Invalid(rtm.PDUIDType)
	}
	return nil
}

// appendHead appends the initial byte and argument of an item in its
// shortest form, as deterministic CBOR requires.
func appendHead(dst []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(dst, m|byte(n))
	case n <= math.MaxUint8:
		return append(dst, m|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, m|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, m|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, m|27), n)
}

func appendText(dst []byte, s string) []byte {
	return append(appendHead(dst, majorText, uint64(len(s))), s...)
}
