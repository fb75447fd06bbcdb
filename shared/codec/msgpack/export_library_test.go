//go:build !js

package msgpack

// DecodeBodyLibrary is the library path of DecodeBody, which the fast
// paths must agree with.
var DecodeBodyLibrary = func(body []byte, v any) error {
	return shaped(body, v, decodeLibraryBody(body, v))
}

// DecodeFast is the fast path of DecodeBody alone: it returns an error
// that is not nil for a body it leaves to the library.
var DecodeFast = decodeFast
