package msgpack

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestBodyTables checks the table of every body type of package rtm
// against its struct, recursively: one field for each field with a json
// tag, in the order the struct declares them, under the tag's name, at
// the field's offset, of the kind its Go type is, found by its key. The
// decoder writes through these offsets, so this is what makes that safe.
func TestBodyTables(t *testing.T) {
	t.Parallel()
	for _, bt := range codectest.BodyTypes {
		v := bt.New()
		tab, p, ok := tableOf(v)
		if _, isMap := v.(*map[string]any); isMap {
			if ok {
				t.Errorf("a map has a table")
			}
			continue
		}
		if !ok || p != reflect.ValueOf(v).UnsafePointer() {
			t.Errorf("%s: no table, or not for the struct decoded into", bt.Name)
			continue
		}
		checkTable(t, bt.Name, tab, reflect.TypeOf(v).Elem())
	}
}

func checkTable(t *testing.T, name string, tab *table, typ reflect.Type) {
	t.Helper()
	var want []reflect.StructField
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
			want = append(want, f)
		}
	}
	if len(tab.fields) != len(want) || len(tab.fields) > maxFields {
		t.Errorf("%s: %d fields in the table, %d in the struct (at most %d)", name, len(tab.fields), len(want), maxFields)
		return
	}
	for i, sf := range want {
		f := tab.fields[i]
		key, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		path := name + "." + key
		if f.key != key || f.off != sf.Offset {
			t.Errorf("%s: table has %q at %d, the struct %q at %d", path, f.key, f.off, key, sf.Offset)
		}
		if got := tab.find([]byte(key)); got != i {
			t.Errorf("%s: find gives field %d of the table, want %d", path, got, i)
		}
		if got := tab.find([]byte(key + "x")); got != -1 {
			t.Errorf("%s: find(%q) gives field %d, want none", path, key+"x", got)
		}
		kind, sub := kindOfType(sf.Type)
		if f.kind != kind {
			t.Errorf("%s: kind %d, want %d for %v", path, f.kind, kind, sf.Type)
		}
		switch {
		case sub == nil && f.sub != nil, sub != nil && f.sub == nil:
			t.Errorf("%s: sub-table %v, want one for %v", path, f.sub, sub)
		case sub != nil:
			checkTable(t, path, f.sub, sub)
			if kind == kindStructPtr && (f.sub.alloc == nil || !reflect.NewAt(sub, f.sub.alloc()).Elem().IsZero()) {
				t.Errorf("%s: no allocation of a zero %v", path, sub)
			}
		}
	}
}

// kindOfType returns the field kind of a Go type, and the struct type
// its sub-table describes, if any.
func kindOfType(typ reflect.Type) (fieldKind, reflect.Type) {
	switch {
	case typ == reflect.TypeFor[string]():
		return kindText, nil
	case typ == reflect.TypeFor[bool]():
		return kindFlag, nil
	case typ == reflect.TypeFor[int64]():
		return kindInt, nil
	case typ == reflect.TypeFor[*int64]():
		return kindIntPtr, nil
	case typ == reflect.TypeFor[uint64]():
		return kindCount, nil
	case typ == reflect.TypeFor[any]():
		return kindMessage, nil
	case typ == reflect.TypeFor[[]any]():
		return kindMessages, nil
	case typ == reflect.TypeFor[[]rtm.PresenceMember]():
		return kindMembers, typ.Elem()
	case typ.Kind() == reflect.Struct:
		return kindStruct, typ
	case typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Struct:
		return kindStructPtr, typ.Elem()
	}
	return 255, nil // no kind: the check fails
}
