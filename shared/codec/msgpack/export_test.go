package msgpack

// DecodeBodyLibrary is the library path of DecodeBody, which the fast
// paths must agree with.
var DecodeBodyLibrary = decodeBody
