package msgpack

import (
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// malformed is the invalid_format of a part that package wire refused
// with err: "frame is not valid msgpack: truncated", its flaw worded by
// package rtm.
func malformed(part rtm.Part, err error) *rtm.Error {
	return rtm.NotValid(part, rtm.FormatMsgpack, wire.FlawOf(err))
}

// decodeEnvelope validates a frame and reads its top-level map in one pass.
func decodeEnvelope(f []byte) (rtm.Envelope, error) {
	k, pairs, i, err := wire.Head(f, 0)
	if err != nil {
		return rtm.Envelope{}, malformed(rtm.PartFrame, err)
	}
	if k != wire.KindMap {
		return rtm.Envelope{}, rtm.Invalid(rtm.PDUNotMap)
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
			return rtm.Envelope{}, malformed(rtm.PartFrame, err)
		}
		kk, _, ks, _ := wire.Head(f, i)
		if kk != wire.KindString {
			return rtm.Envelope{}, rtm.Invalid(rtm.PDUKeyType)
		}
		if err := pdu.Field(f[ks:vs], f[vs:end]); err != nil {
			return rtm.Envelope{}, err
		}
		i = end
	}
	if i != len(f) {
		return rtm.Envelope{}, malformed(rtm.PartFrame, wire.ErrExtra)
	}
	return pdu.Envelope()
}
