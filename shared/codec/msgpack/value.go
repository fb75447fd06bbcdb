package msgpack

import (
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

var _ codec.ValueDecoder = Codec{}

// DecodeValue implements codec.ValueDecoder: it reads one message value,
// as AppendValue writes it, into the canonical model in one pass
// (wire.Decoder), without the library. What the model refuses (a NaN, an
// infinity, a map key that is not valid UTF-8, nesting deeper than
// codec.MaxDepth) is refused as codec.Normalize refuses it.
func (Codec) DecodeValue(b []byte) (any, error) {
	d := wire.NewDecoder(b)
	v, err := d.Value(0)
	if err == nil {
		err = d.End()
	}
	switch {
	case err == wire.ErrKey:
		return nil, rtm.Invalid(rtm.MessageKeyType)
	case err != nil:
		return nil, malformed(rtm.PartValue, err)
	}
	if d.NonCanonical() || d.Deepest() > codec.MaxDepth {
		return codec.Normalize(v)
	}
	return v, nil
}
