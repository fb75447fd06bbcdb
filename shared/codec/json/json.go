// Package json is the JSON codec of RTM: text frames, the protocol's
// default. Messages are written by hand from the canonical value model
// (map keys sorted, floats always with a fraction or exponent so they stay
// floats, binary as base64 strings); typed bodies without message values go
// through encoding/json.
package json

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/shape"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Codec is the JSON codec. The zero value is ready to use and safe for
// concurrent use.
type Codec struct{}

var _ codec.Codec = Codec{}

// Name returns "json", the WebSocket subprotocol.
func (Codec) Name() string { return "json" }

// Binary reports false: JSON PDUs travel in text frames.
func (Codec) Binary() bool { return false }

// emptyBody is the body of a PDU that has none.
var emptyBody = []byte("{}")

// Decode splits a frame into action, id and the raw JSON of its body, which
// aliases frame. A frame that is not JSON is a json_parse_error; valid JSON
// that is not a PDU (not an object, a missing or non-string action, an id
// that is not an integer or a string, a body that is not an object, a key
// given twice) is invalid_format. An absent body decodes as {}. A frame
// that is not valid UTF-8 is a json_parse_error too.
func (Codec) Decode(frame []byte) (rtm.Envelope, error) {
	if env, ok := decodeEnvelopeFast(frame); ok {
		return env, nil
	}
	return decodeFrameLibrary(frame)
}

// decodeFrameLibrary is the library path of Decode: it checks the frame
// with utf8.Valid and json.Valid, then splits it.
func decodeFrameLibrary(frame []byte) (rtm.Envelope, error) {
	// RFC 8259 wants UTF-8, and encoding/json would turn each invalid
	// byte into U+FFFD: "alias\xff" and "alias\ufffd" would be one
	// channel, and a client's bytes would be rewritten. Such a frame is
	// refused here, answered with json_parse_error like any frame that is
	// not JSON, and the connection stays usable; the WebSocket layer does
	// not close text frames with 1007 (see websocket.Conn.ReadMessage).
	if !utf8.Valid(frame) {
		return rtm.Envelope{}, rtm.NotValid(rtm.PartFrame, rtm.FormatJSON, rtm.FlawUTF8)
	}
	if !json.Valid(frame) {
		var raw json.RawMessage
		return rtm.Envelope{}, notJSON(rtm.PartFrame, frame, json.Unmarshal(frame, &raw))
	}
	return decodeEnvelope(frame)
}

// notJSON is the error of a part that is not JSON, for err, the error of
// encoding/json reading it: the reason says the part was truncated where
// the library stopped at its end, and otherwise only that it is not JSON,
// since the library's text names its own internals.
func notJSON(part rtm.Part, data []byte, err error) *rtm.Error {
	var se *json.SyntaxError
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &se) && se.Offset >= int64(len(data)) {
		return rtm.NotValid(part, rtm.FormatJSON, rtm.FlawTruncated)
	}
	return rtm.NotValid(part, rtm.FormatJSON, rtm.FlawUnknown)
}

// DecodeBody decodes a body into v, a pointer to a body type of package rtm
// (or to a map[string]any or an any). Numbers in message values keep their
// exact integer value; every message value is normalized (see
// codec.Normalize). A body of the wrong shape, or with a key twice in one
// of its objects (messages included), is invalid_format.
//
// The bodies of the requests an edge serves most, and of the replies and
// pushes a client receives most, take a fast path without encoding/json
// (fast.go), which gives the same result as the library path for every
// body.
func (Codec) DecodeBody(body []byte, v any) error {
	if err := decodeFast(body, v); err != errLibrary {
		return err
	}
	return decodeLibrary(body, v)
}

// decodeLibrary is the library path of DecodeBody.
func decodeLibrary(body []byte, v any) error {
	switch v.(type) {
	case rtm.ValueCarrier, *any, *map[string]any, *[]any:
	default:
		// No message values, so no numbers to keep exact: the cheaper
		// Unmarshal does, and it refuses trailing data itself.
		if err := json.Unmarshal(body, v); err != nil {
			return bodyError(body, v, err)
		}
		return checkKeys(body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return bodyError(body, v, err)
	}
	if rest := body[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		return rtm.NotValid(rtm.PartBody, rtm.FormatJSON, rtm.FlawExtra)
	}
	if err := checkKeys(body); err != nil {
		return err
	}
	return codec.NormalizeBody(v)
}

// checkKeys refuses a body with a key twice in one of its objects (see
// hasDupKey).
func checkKeys(body []byte) error {
	if hasDupKey(body) {
		return rtm.Invalid(rtm.BodyKeyTwice)
	}
	return nil
}

// bodyError turns an encoding/json error into a reason of package rtm,
// never the library's text. A body of the wrong shape gets the reason
// every codec gives (shape.Error), from the body decoded into the
// canonical model.
func bodyError(body []byte, v any, err error) *rtm.Error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return notJSON(rtm.PartBody, body, err)
	}
	var g any
	if decodeLibrary(body, &g) == nil {
		if e := shape.Error(g, v); e != nil {
			return e
		}
	}
	return rtm.Invalid(rtm.BodyShape)
}
