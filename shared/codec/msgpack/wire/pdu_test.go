package wire_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

func TestReadPDUFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		item   string
		action string // "" if ReadAction refuses it
		id     rtm.ID // zero if ReadID refuses it
		isMap  bool
	}{
		{name: "fixstr", item: "a3612f62", action: "a/b", id: rtm.StringID("a/b")},
		{name: "str8", item: "d901" + "78", action: "x", id: rtm.StringID("x")},
		{name: "empty string", item: "a0", id: rtm.StringID("")},
		{name: "fixint", item: "07", id: rtm.IntID(7)},
		{name: "negative int", item: "d2ffff63c0", id: rtm.IntID(-40000)},
		{name: "max int64 as uint64", item: "cf7fffffffffffffff", id: rtm.IntID(1<<63 - 1)},
		{name: "uint64 above int64", item: "cf8000000000000000"},
		{name: "float", item: "cb3ff8000000000000"},
		{name: "nil", item: "c0"},
		{name: "binary", item: "c40178"},
		{name: "extension", item: "d40100"},
		{name: "fixmap", item: "80", isMap: true},
		{name: "map16", item: "de0000", isMap: true},
		{name: "array", item: "90"},
		{name: "empty", item: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			item := unhex(t, tt.item)
			isString := tt.id.Kind == rtm.IDString
			if a, ok := wire.ReadAction(item); a != tt.action || ok != isString {
				t.Errorf("ReadAction = %q, %v", a, ok)
			}
			if id, ok := wire.ReadID(item); id != tt.id || ok != !tt.id.IsZero() {
				t.Errorf("ReadID = %+v, %v", id, ok)
			}
			if got := wire.IsMap(item); got != tt.isMap {
				t.Errorf("IsMap = %v", got)
			}
		})
	}
}

// TestReadPDUFieldsAllocs checks that a known action and an integer id are
// read without allocating, as a frame's are on the edge's hot path.
func TestReadPDUFieldsAllocs(t *testing.T) {
	action := unhex(t, "ab72746d2f7075626c697368") // "rtm/publish"
	id := unhex(t, "cd1234")
	n := testing.AllocsPerRun(100, func() {
		if a, _ := wire.ReadAction(action); a != rtm.ActionPublish {
			t.Fatal(a)
		}
		if got, _ := wire.ReadID(id); got != rtm.IntID(0x1234) {
			t.Fatal(got)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations, want 0", n)
	}
}
