package view_test

import (
	"reflect"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// enc encodes a message in the edge's carrier: canonical msgpack.
func enc(t testing.TB, v any) []byte {
	t.Helper()
	b, err := wire.AppendValue(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dec decodes one msgpack item, which must be the whole of b.
func dec(t testing.TB, b []byte) any {
	t.Helper()
	d := wire.NewDecoder(b)
	v, err := d.Value(0)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		t.Fatalf("decoding %x: %v", b, err)
	}
	return v
}

// compile compiles a statement that must be valid.
func compile(t testing.TB, statement string) *view.View {
	t.Helper()
	v, err := view.Compile(statement)
	if err != nil {
		t.Fatalf("%s: %v", statement, err)
	}
	return v
}

// apply runs a simple view on one message: the decoded result and
// whether the view kept it.
func apply(t testing.TB, v *view.View, msg any) (any, bool) {
	t.Helper()
	out, ok := v.Append(nil, enc(t, msg))
	if !ok {
		if len(out) != 0 {
			t.Fatalf("dropped, yet appended %x", out)
		}
		return nil, false
	}
	return dec(t, out), true
}

// flush decodes the messages of an Aggregate's Flush.
func flush(t testing.TB, a *view.Aggregate) []any {
	t.Helper()
	var got []any
	for _, m := range a.Flush(nil) {
		got = append(got, dec(t, m))
	}
	return got
}

func same(a, b any) bool { return reflect.DeepEqual(a, b) }

type M = map[string]any
