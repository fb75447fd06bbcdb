package msgpack

import "github.com/sluicehq/sluice/shared/rtm"

// Browser is the codec as js builds have it: the browser's tail
// (mapped.go and requests.go) in place of the fast paths and the library,
// for native tests.
type Browser struct{ Codec }

// DecodeBody decodes as the browser does.
func (Browser) DecodeBody(body []byte, v any) error { return decodeMapped(body, v) }

// AppendPDU encodes as the browser does: Codec.AppendPDU with the
// browser's appendBody.
func (Browser) AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error) {
	start := len(dst)
	dst, err := appendPDUStart(dst, p)
	if err == nil {
		dst, err = appendRequest(dst, p.Body)
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}
