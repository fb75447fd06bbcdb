package rtm_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

func TestNotValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    *rtm.Error
		code   rtm.Code
		reason string
	}{
		{"JSON frame", rtm.NotValid(rtm.PartFrame, rtm.FormatJSON, rtm.FlawUTF8), rtm.CodeJSONParseError, "frame is not valid JSON: invalid UTF-8"},
		{"CBOR frame", rtm.NotValid(rtm.PartFrame, rtm.FormatCBOR, rtm.FlawUnknown), rtm.CodeCBORParseError, "frame is not valid CBOR"},
		{"msgpack frame", rtm.NotValid(rtm.PartFrame, rtm.FormatMsgpack, rtm.FlawTruncated), rtm.CodeInvalidFormat, "frame is not valid msgpack: truncated"},
		{"JSON body", rtm.NotValid(rtm.PartBody, rtm.FormatJSON, rtm.FlawExtra), rtm.CodeInvalidFormat, "body is not valid JSON: extra data after the end"},
		{"CBOR value", rtm.NotValid(rtm.PartValue, rtm.FormatCBOR, rtm.FlawTag), rtm.CodeInvalidFormat, "value is not valid CBOR: tags are not supported"},
	}
	for _, tt := range tests {
		if tt.err.Code != tt.code || tt.err.Reason != tt.reason {
			t.Errorf("%s: %s %q, want %s %q", tt.name, tt.err.Code, tt.err.Reason, tt.code, tt.reason)
		}
	}
}

func TestIsFormatReason(t *testing.T) {
	t.Parallel()
	known := []string{
		string(rtm.PDUNotMap), string(rtm.BodyKeyTwice), string(rtm.MessageTooDeep),
		rtm.Invalid(rtm.BodyShape).Reason,
		rtm.FieldType("channel", rtm.KindNumber).Reason,
		rtm.FieldType("history.count", rtm.KindOutOfRange).Reason,
		rtm.NotValid(rtm.PartFrame, rtm.FormatMsgpack, rtm.FlawReserved).Reason,
		rtm.NotValid(rtm.PartBody, rtm.FormatJSON, rtm.FlawUnknown).Reason,
	}
	for _, r := range known {
		if !rtm.IsFormatReason(r) {
			t.Errorf("%q is not known", r)
		}
	}
	unknown := []string{
		"",
		"internal error",
		"body is not valid JSON: invalid character 'x' looking for beginning of value",
		"frame is not valid CBOR: cbor: invalid additional information 28 for type positive integer",
		`body field "channel" has the wrong type (int64)`,
		`body field "Channel" has the wrong type (number)`,
		`body field "a..b" has the wrong type (number)`,
		`body field "channel" has the wrong type (number`,
		"frame is not valid YAML",
	}
	for _, r := range unknown {
		if rtm.IsFormatReason(r) {
			t.Errorf("%q is known", r)
		}
	}
}

// TestMessageTooDeep checks that the reason of a message nested too deep
// says how deep it may nest.
func TestMessageTooDeep(t *testing.T) {
	t.Parallel()
	if want := " " + strconv.Itoa(rtm.MaxDepth) + " levels"; !strings.Contains(string(rtm.MessageTooDeep), want) {
		t.Fatalf("%q does not say %q", rtm.MessageTooDeep, want)
	}
}
