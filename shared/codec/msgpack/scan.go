package msgpack

import (
	"math"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// malformed is the invalid_format of a frame or body that package wire
// refused; its errors read "msgpack: <why>", so the reason reads "frame is
// not valid msgpack: <why>".
func malformed(what string, err error) *rtm.Error {
	return codec.Invalid(what + " is not valid " + err.Error())
}

// decodeEnvelope validates a frame and reads its top-level map in one pass.
func decodeEnvelope(f []byte) (rtm.Envelope, error) {
	var env rtm.Envelope
	k, pairs, i, err := wire.Head(f, 0)
	if err != nil {
		return env, malformed("frame", err)
	}
	if k != wire.KindMap {
		return env, codec.Invalid("PDU must be a map")
	}
	var s wire.Scanner
	var seen struct{ action, id, body bool }
	for ; pairs > 0; pairs-- {
		vs, err := s.Skip(f, i, 1)
		var end int
		if err == nil {
			end, err = s.Skip(f, vs, 1)
		}
		if err != nil {
			return rtm.Envelope{}, malformed("frame", err)
		}
		kk, _, ks, _ := wire.Head(f, i)
		if kk != wire.KindString {
			return rtm.Envelope{}, codec.Invalid("PDU keys must be strings")
		}
		switch string(f[ks:vs]) {
		case "action":
			err = codec.Once(&seen.action)
			if err == nil {
				env.Action, err = str(f[vs:end], true)
			}
		case "id":
			err = codec.Once(&seen.id)
			if err == nil {
				err = decodeID(&env.ID, f[vs:end])
			}
		case "body":
			err = codec.Once(&seen.body)
			if bk, _, _, _ := wire.Head(f, vs); err == nil && bk != wire.KindMap {
				err = codec.Invalid("PDU body must be a map")
			}
			env.Body = f[vs:end]
		}
		if err != nil {
			return rtm.Envelope{}, err
		}
		i = end
	}
	return finish(env, seen.action, seen.body, i, len(f))
}

func finish(env rtm.Envelope, action, body bool, end, size int) (rtm.Envelope, error) {
	switch {
	case end != size:
		return rtm.Envelope{}, malformed("frame", wire.ErrExtra)
	case !action:
		return rtm.Envelope{}, codec.Invalid("PDU has no action")
	case !body:
		env.Body = emptyBody
	}
	return env, nil
}

// str returns the string item v, already checked for UTF-8.
func str(v []byte, action bool) (string, error) {
	k, _, i, err := wire.Head(v, 0)
	if err != nil || k != wire.KindString {
		return "", codec.Invalid("PDU action must be a string")
	}
	if action {
		return codec.Action(v[i:]), nil
	}
	return string(v[i:]), nil
}

// decodeID keeps the id's type: an integer that fits an int64 or a string;
// anything else cannot be echoed faithfully.
func decodeID(id *rtm.ID, v []byte) error {
	k, n, _, err := wire.Head(v, 0)
	switch {
	case err == nil && k == wire.KindInt:
		*id = rtm.IntID(int64(n))
	case err == nil && k == wire.KindUint && n <= math.MaxInt64:
		*id = rtm.IntID(int64(n))
	case err == nil && k == wire.KindString:
		s, _ := str(v, false)
		*id = rtm.StringID(s)
	default:
		return codec.Invalid("PDU id must be an integer or a string")
	}
	return nil
}
