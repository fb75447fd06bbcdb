package msgpack

// The browser writes the requests it sends field by field (requests.go)
// instead of through the msgpack library, which sluice.wasm leaves out.
// The other builds' is library.go.

// appendBody appends a body for AppendPDU: a request, field by field.
func appendBody(dst []byte, body any) ([]byte, error) { return appendRequest(dst, body) }
