package msgpack

// DecodeBodyLibrary is the library path of DecodeBody, which the fast
// paths must agree with.
var DecodeBodyLibrary = func(body []byte, v any) error { return shaped(body, v, decodeBody(body, v)) }
