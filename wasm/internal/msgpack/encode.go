package msgpack

import (
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// AppendPDU appends p as a msgpack map {"action","id"?,"body"}, like the
// shared codec: the id is left out when absent, a nil body is an empty
// map, and the request bodies of package rtm are written as maps of their
// `json` names (omitempty honoured; keys sorted, as for every map). The
// body types the client never sends are refused. On error dst is returned
// unchanged.
func (Codec) AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error) {
	if !utf8.ValidString(p.Action) || (p.ID.Kind == rtm.IDString && !utf8.ValidString(p.ID.Str)) {
		return dst, encodeError(p.Action, wire.ErrUTF8)
	}
	start := len(dst)
	dst = wire.AppendPDUStart(dst, p.Action, p.ID)
	var err error
	switch b := p.Body.(type) {
	case nil, rtm.Empty, *rtm.Empty:
		dst = append(dst, wire.EmptyBody...)
	case map[string]any, map[any]any:
		dst, err = wire.AppendValue(dst, b)
	default:
		var m map[string]any
		if m, err = bodyMap(b); err == nil {
			dst, err = wire.AppendValue(dst, m)
		}
	}
	if err != nil {
		return dst[:start], encodeError(p.Action+" body", err)
	}
	return dst, nil
}

// AppendValue appends the msgpack of one message value in the canonical
// model (other integer widths and float32 are accepted too): map keys
// sorted, integers in their shortest form, floats as 64-bit floats. A
// value the model has no room for is an *rtm.Error with code
// invalid_format, and dst is returned unchanged.
func (Codec) AppendValue(dst []byte, v any) ([]byte, error) {
	return wire.AppendValue(dst, v)
}

// AppendData appends an rtm/subscription/data PDU whose messages are
// already encoded. The client never sends one; it is here because
// codec.Codec has it.
func (Codec) AppendData(dst []byte, subscriptionID string, pos rtm.Position, messages [][]byte) []byte {
	return wire.AppendData(dst, subscriptionID, pos, messages)
}
