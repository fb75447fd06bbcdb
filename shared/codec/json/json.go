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
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
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
		return rtm.Envelope{}, &rtm.Error{Code: rtm.CodeJSONParseError, Reason: "frame is not valid UTF-8"}
	}
	if !json.Valid(frame) {
		var raw json.RawMessage
		err := json.Unmarshal(frame, &raw)
		reason := "frame is not valid JSON"
		if err != nil {
			reason += ": " + err.Error()
		}
		return rtm.Envelope{}, &rtm.Error{Code: rtm.CodeJSONParseError, Reason: reason}
	}
	return decodeEnvelope(frame)
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
		return rtm.Errorf(rtm.CodeInvalidFormat, "body is followed by extra data")
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
		return codec.Invalid("body has a key twice")
	}
	return nil
}

// bodyError turns an encoding/json error into a reason a client can act on,
// without Go type names. A body of the wrong shape gets the reason every
// codec gives (codec.ShapeError), from the body decoded into the
// canonical model.
func bodyError(body []byte, v any, err error) *rtm.Error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		var g any
		if decodeLibrary(body, &g) == nil {
			if e := codec.ShapeError(g, v); e != nil {
				return e
			}
		}
		return codec.ShapeFallback()
	case errors.As(err, &se):
		return rtm.Errorf(rtm.CodeInvalidFormat, "body is not valid JSON: %s", se.Error())
	}
	return rtm.Errorf(rtm.CodeInvalidFormat, "body is not valid JSON")
}
