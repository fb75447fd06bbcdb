package msgpack

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// AppendPDU appends p as a msgpack map {"action","id"?,"body"}. The id is
// left out when p.ID is absent and a nil body is written as an empty map.
// Bodies that carry message values (PublishBody, ReadReply,
// SubscriptionData, maps) and PositionBody are written by hand like
// AppendValue (codec.AppendBody), the others through the library with
// their `json` tags; in the browser, which writes only requests, each
// request body is the map of its fields (see the package doc). An action
// or string id that is not valid UTF-8 is refused, since the decoder would
// refuse it. On error dst is returned unchanged.
func (Codec) AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error) {
	start := len(dst)
	dst, err := appendPDUStart(dst, p)
	if err == nil {
		dst, err = appendBody(dst, p.Body)
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// appendPDUStart appends the start of p, up to its body (see
// wire.AppendPDUStart), refusing an action or string id that is not valid
// UTF-8.
func appendPDUStart(dst []byte, p *rtm.PDU) ([]byte, error) {
	if !utf8.ValidString(p.Action) || (p.ID.Kind == rtm.IDString && !utf8.ValidString(p.ID.Str)) {
		return dst, errors.New("msgpack: action or id of " + strconv.Quote(p.Action) + " is not valid UTF-8")
	}
	return wire.AppendPDUStart(dst, p.Action, p.ID), nil
}

// AppendData appends an rtm/subscription/data PDU whose messages were
// encoded by AppendValue, splicing them in as they are. It is the fan-out's
// hot path: with room in dst it does not allocate. subscriptionID must be
// valid UTF-8, as every string a codec decodes is.
func (Codec) AppendData(dst []byte, subscriptionID string, pos rtm.Position, messages [][]byte) []byte {
	return wire.AppendData(dst, subscriptionID, pos, messages)
}

// AppendValue appends the msgpack of one message value in the canonical
// model, as wire.AppendValue does: map keys sorted, integers in their
// shortest form, floats as 64-bit floats, an rtm.RawValue copied as is.
// Other integer widths, float32 and maps keyed by any with string keys are
// accepted too. A value the model has no room for is an *rtm.Error with
// code invalid_format, and dst is returned unchanged.
func (Codec) AppendValue(dst []byte, v any) ([]byte, error) {
	return wire.AppendValue(dst, v)
}

// AppendDelta implements codec.DeltaEncoder: delta as binary, which
// carries any bytes.
func (Codec) AppendDelta(dst, delta []byte) ([]byte, bool) {
	return wire.AppendBinary(dst, delta), true
}

// AppendDeltaData implements codec.DeltaEncoder.
func (Codec) AppendDeltaData(dst []byte, subscriptionID string, pos rtm.Position, deltas [][]byte) []byte {
	return wire.AppendDeltaData(dst, subscriptionID, pos, deltas)
}
