package rtm

import "strings"

// The errors a codec gives for a frame or a body it cannot read are
// worded here, once for every codec: a client reads the same reason
// whatever codec it speaks, and never a decoder's or a library's own
// error text, which names Go types or a format's internals and changes
// with the library's version. A codec maps what its decoder reports to
// one of these. Like every reason they are for people and may change;
// clients code against the code (PROTOCOL.md).

// MaxDepth is how deeply arrays and maps may nest in a message: a
// message nested deeper is refused with MessageTooDeep in every codec.
const MaxDepth = 64

// Fault is the reason of the invalid_format of a frame, a body or a
// message that its codec could read but that RTM does not accept.
type Fault string

// Faults of a frame that is valid in its format but not a PDU.
const (
	PDUNotMap     Fault = "PDU must be a map"
	PDUKeyType    Fault = "PDU keys must be strings"
	PDUKeyTwice   Fault = "PDU has a key twice"
	PDUNoAction   Fault = "PDU has no action"
	PDUActionType Fault = "PDU action must be a string"
	PDUIDType     Fault = "PDU id must be an integer or a string"
	PDUBodyType   Fault = "PDU body must be a map"
	PDUNotUTF8    Fault = "PDU action and id must be valid UTF-8"
	PDUString     Fault = "PDU string is malformed"
	PDUTruncated  Fault = "PDU is truncated"
)

// Faults of a body that does not fit its action (see also FieldType).
const (
	BodyNotMap   Fault = "body must be a map"
	BodyKeyType  Fault = "body keys must be strings"
	BodyKeyTwice Fault = "body has a key twice"
	// BodyShape is a body that does not fit where no one field is to
	// blame.
	BodyShape   Fault = "body does not have the fields and types its action needs"
	BodyNotUTF8 Fault = "body strings must be valid UTF-8"
)

// Faults of a message, which must be a value of the data model.
const (
	MessageTooDeep     Fault = "message nests deeper than 64 levels" // MaxDepth
	MessageNonFinite   Fault = "message holds NaN or an infinite number"
	MessageNotUTF8     Fault = "message string is not valid UTF-8"
	MessageKeyNotUTF8  Fault = "message map key is not valid UTF-8"
	MessageKeyType     Fault = "message map keys must be strings"
	MessageNumber      Fault = "message number is out of range or malformed"
	MessageTooLong     Fault = "message string or binary is too long"
	MessageUnsupported Fault = "message holds a value outside the data model"
)

// faults lists every Fault, for IsFormatReason.
var faults = [...]Fault{
	PDUNotMap, PDUKeyType, PDUKeyTwice, PDUNoAction, PDUActionType, PDUIDType, PDUBodyType, PDUNotUTF8, PDUString, PDUTruncated,
	BodyNotMap, BodyKeyType, BodyKeyTwice, BodyShape, BodyNotUTF8,
	MessageTooDeep, MessageNonFinite, MessageNotUTF8, MessageKeyNotUTF8, MessageKeyType, MessageNumber, MessageTooLong, MessageUnsupported,
}

// Invalid returns the invalid_format error of fault.
func Invalid(fault Fault) *Error {
	return &Error{Code: CodeInvalidFormat, Reason: string(fault)}
}

// ValueKind names the kind of a value in a reason, in words every codec
// shares.
type ValueKind string

// The kinds of value.
const (
	KindNull       ValueKind = "null"
	KindBool       ValueKind = "bool"
	KindNumber     ValueKind = "number"
	KindOutOfRange ValueKind = "number out of range"
	KindString     ValueKind = "string"
	KindBinary     ValueKind = "binary"
	KindArray      ValueKind = "array"
	KindMap        ValueKind = "map"
	KindValue      ValueKind = "value"
)

var kinds = [...]ValueKind{KindNull, KindBool, KindNumber, KindOutOfRange, KindString, KindBinary, KindArray, KindMap, KindValue}

// FieldType returns the invalid_format error of a body whose field at
// path (its key, or keys joined by dots: "history.count") holds a value
// of the wrong kind: `body field "history.count" has the wrong type
// (string)`.
func FieldType(path string, kind ValueKind) *Error {
	return &Error{Code: CodeInvalidFormat, Reason: fieldTypePrefix + path + `" has the wrong type (` + string(kind) + ")"}
}

const fieldTypePrefix = `body field "`

// Format names a codec's encoding in the reason of what is not valid in
// it.
type Format string

// The formats of the codecs.
const (
	FormatJSON    Format = "JSON"
	FormatCBOR    Format = "CBOR"
	FormatMsgpack Format = "msgpack"
)

// Part names what a codec could not read: a whole frame, the body of a
// PDU, or one message value (as the edge stores it).
type Part string

// The parts.
const (
	PartFrame Part = "frame"
	PartBody  Part = "body"
	PartValue Part = "value"
)

// Flaw says why an item is not valid in its format, when the decoder can
// tell.
type Flaw string

// The flaws. FlawUnknown is for a decoder that does not say.
const (
	FlawUnknown    Flaw = ""
	FlawTruncated  Flaw = "truncated"
	FlawExtra      Flaw = "extra data after the end"
	FlawUTF8       Flaw = "invalid UTF-8"
	FlawDeep       Flaw = "nested too deeply"
	FlawTooMany    Flaw = "too many items"
	FlawReserved   Flaw = "reserved type byte 0xc1"
	FlawExtension  Flaw = "extension types are not supported"
	FlawIndefinite Flaw = "indefinite lengths are not supported"
	FlawTag        Flaw = "tags are not supported"
)

var (
	flaws   = [...]Flaw{FlawUnknown, FlawTruncated, FlawExtra, FlawUTF8, FlawDeep, FlawTooMany, FlawReserved, FlawExtension, FlawIndefinite, FlawTag}
	formats = [...]Format{FormatJSON, FormatCBOR, FormatMsgpack}
	parts   = [...]Part{PartFrame, PartBody, PartValue}
)

// NotValid returns the error of a part that is not valid in format, for
// flaw: "frame is not valid msgpack: truncated", or "body is not valid
// JSON" when the flaw is unknown. A frame that is not JSON or CBOR is
// that codec's parse error, json_parse_error or cbor_parse_error
// (PROTOCOL.md); anything else is invalid_format.
func NotValid(part Part, format Format, flaw Flaw) *Error {
	code := CodeInvalidFormat
	if part == PartFrame {
		switch format {
		case FormatJSON:
			code = CodeJSONParseError
		case FormatCBOR:
			code = CodeCBORParseError
		}
	}
	return &Error{Code: code, Reason: notValid(part, format, flaw)}
}

func notValid(part Part, format Format, flaw Flaw) string {
	r := string(part) + " is not valid " + string(format)
	if flaw != FlawUnknown {
		r += ": " + string(flaw)
	}
	return r
}

// IsFormatReason reports whether reason is one of those above: a Fault,
// or one that FieldType or NotValid gives. Tests check every refusal of a
// frame or body with it; a client codes against the error's code instead.
func IsFormatReason(reason string) bool {
	for _, f := range faults {
		if reason == string(f) {
			return true
		}
	}
	if path, kind, ok := cutFieldType(reason); ok {
		for _, k := range kinds {
			if kind == string(k) {
				return validPath(path)
			}
		}
		return false
	}
	for _, p := range parts {
		for _, f := range formats {
			for _, fl := range flaws {
				if reason == notValid(p, f, fl) {
					return true
				}
			}
		}
	}
	return false
}

// cutFieldType splits a reason of FieldType into its path and kind.
func cutFieldType(reason string) (path, kind string, ok bool) {
	rest, ok := strings.CutPrefix(reason, fieldTypePrefix)
	if !ok {
		return "", "", false
	}
	path, rest, ok = strings.Cut(rest, `" has the wrong type (`)
	if !ok {
		return "", "", false
	}
	kind, ok = strings.CutSuffix(rest, ")")
	return path, kind, ok
}

// validPath reports whether path is a body field's path: keys of lower
// case letters and underscores, joined by dots. Keys are the json tags of
// this package's bodies, so a path never quotes a client's input.
func validPath(path string) bool {
	for key := range strings.SplitSeq(path, ".") {
		if key == "" || strings.Trim(key, "abcdefghijklmnopqrstuvwxyz_") != "" {
			return false
		}
	}
	return true
}
