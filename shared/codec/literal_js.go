package codec

// normalizeLiteral reports that v is no number literal: the browser build
// decodes msgpack only, which has none (encoding/json's Number is what
// Normalize reads natively), and parsing one would link strconv's
// ParseFloat, some 7 KB gzipped of sluice.wasm.
func normalizeLiteral(any) (any, bool, error) { return nil, false, nil }
