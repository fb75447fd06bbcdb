package msgpack

import "github.com/sluicehq/sluice/shared/rtm"

// Browser is the codec as js builds have it, for native tests: it writes
// the requests it sends field by field (requests.go) in place of the
// library. It decodes as every build does.
type Browser struct{ Codec }

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
