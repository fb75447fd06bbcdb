package msgpack

// This file is the tail of the codec in the browser (see the package
// doc): mapped.go and requests.go instead of the fast paths and the
// msgpack library, which sluice.wasm leaves out. The other builds' is
// library.go.

// decodeBody is DecodeBody: every body mapped from the value model.
func decodeBody(body []byte, v any) error { return decodeMapped(body, v) }

// appendBody appends a body for AppendPDU: a request, field by field.
func appendBody(dst []byte, body any) ([]byte, error) { return appendRequest(dst, body) }
