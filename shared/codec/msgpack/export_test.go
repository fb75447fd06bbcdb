package msgpack

import (
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Browser is the codec as js builds have it: the browser's tail
// (mapped.go and requests.go) in place of the fast paths and the library,
// for native tests.
type Browser struct{ Codec }

// DecodeBody decodes as the browser does.
func (Browser) DecodeBody(body []byte, v any) error { return decodeMapped(body, v) }

// AppendPDU encodes as the browser does: Codec.AppendPDU with the
// browser's appendBody.
func (Browser) AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error) {
	if !utf8.ValidString(p.Action) || (p.ID.Kind == rtm.IDString && !utf8.ValidString(p.ID.Str)) {
		return dst, notUTF8(p.Action)
	}
	start := len(dst)
	dst, err := appendRequest(wire.AppendPDUStart(dst, p.Action, p.ID), p.Body)
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}
