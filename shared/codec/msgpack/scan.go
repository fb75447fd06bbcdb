package msgpack

import (
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// malformed is the invalid_format of a frame or body that package wire
// refused; its errors read "msgpack: <why>", so the reason reads "frame is
// not valid msgpack: <why>". It is kept out of line, to keep sluice.wasm
// smaller: errors are not a hot path.
//
//go:noinline
func malformed(what string, err error) *rtm.Error {
	return codec.Invalid(what + " is not valid " + err.Error())
}

// decodeEnvelope validates a frame and reads its top-level map in one pass.
func decodeEnvelope(f []byte) (rtm.Envelope, error) {
	k, pairs, i, err := wire.Head(f, 0)
	if err != nil {
		return rtm.Envelope{}, malformed("frame", err)
	}
	if k != wire.KindMap {
		return rtm.Envelope{}, codec.Invalid("PDU must be a map")
	}
	var s wire.Scanner
	var pdu wire.PDUFields
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
		if err := pdu.Field(f[ks:vs], f[vs:end]); err != nil {
			return rtm.Envelope{}, err
		}
		i = end
	}
	if i != len(f) {
		return rtm.Envelope{}, malformed("frame", wire.ErrExtra)
	}
	return pdu.Envelope()
}
