// Package shape words the refusal of a body of the wrong shape for the
// codecs that decode bodies through a library (json, cbor), by
// reflection on the body types of package rtm. It is apart from package
// codec so that the browser build, whose msgpack decoder words the same
// reasons as it reads, links no reflect.
package shape

import (
	"math"
	"reflect"
	"strings"

	"github.com/sluicehq/sluice/shared/rtm"
)

// A body of the wrong shape (a field of the wrong type) is reported from
// the canonical model, not from the decoding library: each library words
// its errors in its own terms (CBOR's names Go types and its major types,
// "rtm.PublishBody.channel ... (positive integer)"), while a client must
// read the same reason whatever codec it speaks (rtm.FieldType). The
// library-based codecs decode the body once more into the canonical model
// and call Error; msgpack's decoder, which reads each field itself,
// words the same reason as it goes.

// Error returns the invalid_format error for a body, decoded into the
// canonical model as body, that does not fit v, a pointer to a body type of
// package rtm: the first field of v (in declaration order) whose value has
// the wrong type, as `body field "history.count" has the wrong type
// (string)` (rtm.FieldType), or rtm.BodyNotMap. It returns nil when it
// finds no fault; the codec then answers with rtm.BodyShape.
func Error(body any, v any) *rtm.Error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil
	}
	t = t.Elem()
	if t.Kind() != reflect.Struct && t.Kind() != reflect.Map {
		return nil
	}
	m, ok := body.(map[string]any)
	if !ok {
		return rtm.Invalid(rtm.BodyNotMap)
	}
	if t.Kind() == reflect.Map {
		return nil
	}
	path, kind := misfit(t, m, "")
	if path == "" {
		return nil
	}
	return rtm.FieldType(path, kind)
}

// misfit returns the path of the first field of struct type t whose value
// in m does not fit, and the kind of that value; "" when all fit.
func misfit(t reflect.Type, m map[string]any, prefix string) (string, rtm.ValueKind) {
	for i := range t.NumField() {
		f := t.Field(i)
		name := fieldName(f)
		if name == "" {
			continue
		}
		x, ok := m[name]
		if !ok {
			continue
		}
		if path, kind := misfitValue(f.Type, x, prefix+name); path != "" {
			return path, kind
		}
	}
	return "", ""
}

// misfitValue checks one value against the type of its field.
func misfitValue(t reflect.Type, x any, path string) (string, rtm.ValueKind) {
	if x == nil {
		return "", "" // null leaves a field as it is, in every codec
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fits := true
	switch t.Kind() {
	case reflect.Interface:
	case reflect.String:
		_, fits = x.(string)
	case reflect.Bool:
		_, fits = x.(bool)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, isInt := x.(int64)
		if !isInt {
			if _, big := x.(uint64); big {
				return path, rtm.KindOutOfRange
			}
			fits = false
		} else if reflect.Zero(t).OverflowInt(n) {
			return path, rtm.KindOutOfRange
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch n := x.(type) {
		case int64:
			if n < 0 || reflect.Zero(t).OverflowUint(uint64(n)) {
				return path, rtm.KindOutOfRange
			}
		case uint64:
			if reflect.Zero(t).OverflowUint(n) {
				return path, rtm.KindOutOfRange
			}
		default:
			fits = false
		}
	case reflect.Float32, reflect.Float64:
		switch n := x.(type) {
		case int64, uint64:
		case float64:
			fits = t.Kind() == reflect.Float64 || math.Abs(n) <= math.MaxFloat32
		default:
			fits = false
		}
	case reflect.Struct:
		m, ok := x.(map[string]any)
		if !ok {
			return path, valueKind(x)
		}
		return misfit(t, m, path+".")
	case reflect.Slice:
		a, ok := x.([]any)
		if !ok {
			return path, valueKind(x)
		}
		for _, e := range a {
			if p, kind := misfitValue(t.Elem(), e, path); p != "" {
				return p, kind
			}
		}
	case reflect.Map:
		_, fits = x.(map[string]any)
	}
	if !fits {
		return path, valueKind(x)
	}
	return "", ""
}

// fieldName is a struct field's key in a body: its json tag's name (the
// codecs all follow the json tags), "" for a field no key sets.
func fieldName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

// valueKind names a canonical value's kind in words every codec shares.
func valueKind(x any) rtm.ValueKind {
	switch x.(type) {
	case nil:
		return rtm.KindNull
	case bool:
		return rtm.KindBool
	case int64, uint64, float64:
		return rtm.KindNumber
	case string:
		return rtm.KindString
	case []byte:
		return rtm.KindBinary
	case []any:
		return rtm.KindArray
	case map[string]any:
		return rtm.KindMap
	}
	return rtm.KindValue
}
