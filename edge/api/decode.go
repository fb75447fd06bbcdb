package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
)

// decode decodes a request body into v, a pointer to one of the request
// structs. The body is first checked by the RTM JSON codec, which refuses
// what RTM refuses (invalid UTF-8, a key given twice, a value outside the
// canonical model) with RTM's codes and reasons, then decoded by
// encoding/json refusing unknown fields. An empty body is {}.
func decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if !utf8.Valid(body) {
		// encoding/json would turn each invalid byte into U+FFFD,
		// rewriting the backend's channel names and messages.
		return parseError("the request body is not valid UTF-8")
	}
	if !json.Valid(body) {
		var raw json.RawMessage
		reason := "the request body is not valid JSON"
		if err := json.Unmarshal(body, &raw); err != nil {
			reason += ": " + strings.TrimPrefix(err.Error(), "json: ")
		}
		return parseError(reason)
	}
	var generic any
	if err := (jsoncodec.Codec{}).DecodeBody(body, &generic); err != nil {
		return err
	}
	if _, ok := generic.(map[string]any); !ok {
		return invalid("the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return shapeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalid("the request body is followed by extra data")
	}
	return nil
}

// shapeError words encoding/json's error without Go's type names.
func shapeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return invalid(fmt.Sprintf("field %q: a JSON %s is not what it takes", te.Field, te.Value))
	}
	// Unknown fields, the only other error of a body the codec accepted.
	msg, _ := bytes.CutPrefix([]byte(err.Error()), []byte("json: "))
	return invalid(string(msg))
}

// decodeMessage decodes a request's message into the canonical value
// model, as an RTM publish's would be; a missing message is refused (null
// publishes null).
func decodeMessage(raw json.RawMessage) (any, error) {
	if raw == nil {
		return nil, invalid(`field "message" is required (null publishes null)`)
	}
	var v any
	if err := (jsoncodec.Codec{}).DecodeBody(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

func parseError(reason string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: string(rtm.CodeJSONParseError), Reason: reason}
}

func invalid(reason string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidFormat, Reason: reason}
}
