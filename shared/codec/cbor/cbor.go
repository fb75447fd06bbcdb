// Package cbor is the CBOR codec of RTM (RFC 8949), the binary codec of the
// RTM JavaScript SDK, built on github.com/fxamacker/cbor/v2.
//
// Frames are checked for well-formedness before anything is decoded, under
// explicit limits: definite lengths only (indefinite-length items are a
// cbor_parse_error), no tags, at most codec.MaxDepth+8 levels of nesting and
// at most MaxElements items per array or map. Messages are written by hand
// from the canonical value model (map keys sorted, integers in their
// shortest form, floats as 64-bit floats); typed bodies without message
// values go through the library.
package cbor

import (
	"errors"
	"io"
	"reflect"

	"github.com/fxamacker/cbor/v2"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/shape"
	"github.com/sluicehq/sluice/shared/rtm"
)

// MaxElements is the most items an array, or pairs a map, may hold in a
// decoded frame.
const MaxElements = 1 << 20

// maxNesting leaves room above codec.MaxDepth for the PDU map, the body map
// and the messages array, so a message nested just too deep is reported as
// invalid_format by normalization rather than as a parse error.
const maxNesting = codec.MaxDepth + 8

// Codec is the CBOR codec. The zero value is ready to use and safe for
// concurrent use.
type Codec struct{}

var _ codec.Codec = Codec{}

var (
	decMode = mustDecMode()
	encMode = mustEncMode()
)

func mustDecMode() cbor.DecMode {
	dm, err := cbor.DecOptions{
		// A key twice in a body or a message is refused, as in the PDU
		// and in JSON: quietly the library keeps the first for a struct
		// field and the last for a map, and another codec may differ.
		DupMapKey:             cbor.DupMapKeyEnforcedAPF,
		MaxNestedLevels:       maxNesting,
		MaxArrayElements:      MaxElements,
		MaxMapPairs:           MaxElements,
		IndefLength:           cbor.IndefLengthForbidden,
		TagsMd:                cbor.TagsForbidden,
		IntDec:                cbor.IntDecConvertNone, // normalized to int64 below MaxInt64
		MapKeyByteString:      cbor.MapKeyByteStringForbidden,
		DefaultMapType:        reflect.TypeFor[map[string]any](),
		UTF8:                  cbor.UTF8RejectInvalid,
		FieldNameMatching:     cbor.FieldNameMatchingCaseSensitive,
		DefaultByteStringType: reflect.TypeFor[[]byte](),
		ByteStringToString:    cbor.ByteStringToStringForbidden,
		FieldNameByteString:   cbor.FieldNameByteStringForbidden,
	}.DecMode()
	if err != nil {
		panic("cbor: decoding options: " + err.Error())
	}
	return dm
}

func mustEncMode() cbor.EncMode {
	em, err := cbor.EncOptions{
		Sort:          cbor.SortBytewiseLexical,
		ShortestFloat: cbor.ShortestFloatNone,
		NaNConvert:    cbor.NaNConvertReject,
		InfConvert:    cbor.InfConvertReject,
		BigIntConvert: cbor.BigIntConvertReject,
		IndefLength:   cbor.IndefLengthForbidden,
		TagsMd:        cbor.TagsForbidden,
		String:        cbor.StringToTextString,
		FieldName:     cbor.FieldNameToTextString,
	}.EncMode()
	if err != nil {
		panic("cbor: encoding options: " + err.Error())
	}
	return em
}

// Name returns "cbor", the WebSocket subprotocol.
func (Codec) Name() string { return "cbor" }

// Binary reports true: CBOR PDUs travel in binary frames.
func (Codec) Binary() bool { return true }

// emptyBody is the body of a PDU that has none: an empty map.
var emptyBody = []byte{0xa0}

// Decode splits a frame into action, id and the raw CBOR of its body, which
// aliases frame. A frame that is not well-formed CBOR within the limits is a
// cbor_parse_error; a well-formed item that is not a PDU (not a map, a key
// that is not a string or is given twice, a missing or non-string
// action, an id that is not an integer or a string, a body that is not
// a map) is invalid_format. An absent body decodes as an empty map.
func (Codec) Decode(frame []byte) (rtm.Envelope, error) {
	if err := decMode.Wellformed(frame); err != nil {
		return rtm.Envelope{}, rtm.NotValid(rtm.PartFrame, rtm.FormatCBOR, flaw(err))
	}
	return decodeEnvelope(frame)
}

// DecodeBody decodes a body into v, a pointer to a body type of package rtm
// (or to a map[string]any or an any), and normalizes its message values. A
// body of the wrong shape is invalid_format.
func (Codec) DecodeBody(body []byte, v any) error {
	if err := decMode.Unmarshal(body, v); err != nil {
		return bodyError(body, v, err)
	}
	return codec.NormalizeBody(v)
}

// bodyError is the error of a body the library refused, in the words of
// package rtm: the library's errors name Go types and CBOR's major types
// ("rtm.PublishBody.channel", "positive integer"). A body of the wrong
// shape gets the reason every codec gives (shape.Error), from the
// body decoded into the canonical model.
func bodyError(body []byte, v any, err error) *rtm.Error {
	var te *cbor.UnmarshalTypeError
	var de *cbor.DupMapKeyError
	if errors.As(err, &de) {
		return rtm.Invalid(rtm.BodyKeyTwice)
	}
	if !errors.As(err, &te) {
		return rtm.NotValid(rtm.PartBody, rtm.FormatCBOR, flaw(err))
	}
	var g any
	if decMode.Unmarshal(body, &g) == nil && codec.NormalizeBody(&g) == nil {
		if e := shape.Error(g, v); e != nil {
			return e
		}
	}
	return rtm.Invalid(rtm.BodyShape)
}

// flaw maps an error of the library's to the flaw of package rtm it
// reports, by its type: FlawUnknown for the errors whose type says no
// more than that the input is not well-formed (a SyntaxError, or a
// SemanticError, which is invalid UTF-8 in this release but not by
// contract).
func flaw(err error) rtm.Flaw {
	var (
		extra *cbor.ExtraneousDataError
		deep  *cbor.MaxNestedLevelError
		array *cbor.MaxArrayElementsError
		pairs *cbor.MaxMapPairsError
		indef *cbor.IndefiniteLengthError
		tags  *cbor.TagsMdError
	)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return rtm.FlawTruncated
	case errors.As(err, &extra):
		return rtm.FlawExtra
	case errors.As(err, &deep):
		return rtm.FlawDeep
	case errors.As(err, &array), errors.As(err, &pairs):
		return rtm.FlawTooMany
	case errors.As(err, &indef):
		return rtm.FlawIndefinite
	case errors.As(err, &tags):
		return rtm.FlawTag
	}
	return rtm.FlawUnknown
}
