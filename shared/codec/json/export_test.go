package json

// DecodeBodyLibrary is the library path of DecodeBody, which the fast
// paths must agree with.
var DecodeBodyLibrary = decodeLibrary

// DecodeFast is the fast path alone, and ErrLibrary what it returns for a
// body it leaves to the library.
var (
	DecodeFast = decodeFast
	ErrLibrary = errLibrary
)

// DecodeFrameLibrary is the library path of Decode.
var DecodeFrameLibrary = decodeFrameLibrary

// DecodeEnvelopeFast is the fast path of Decode alone.
var DecodeEnvelopeFast = decodeEnvelopeFast
