package errtext

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

var errKind = errors.New("client: bad options")

type stringer struct{}

func (stringer) String() string { return "stringer" }

// TestWrapAndKindReadAsFmt checks that the errors read as fmt.Errorf's
// and unwrap to their cause.
func TestWrapAndKindReadAsFmt(t *testing.T) {
	cause := fmt.Errorf("deep: %w", errKind)
	w := Wrap(`client: publish to "c"`, cause)
	if want := fmt.Errorf("client: publish to %q: %w", "c", cause).Error(); w.Error() != want {
		t.Errorf("Wrap: %q, want %q", w, want)
	}
	if !errors.Is(w, errKind) || errors.Unwrap(w) != cause {
		t.Errorf("Wrap does not unwrap to its cause")
	}
	k := Kind(errKind, "AppKey is required")
	if want := fmt.Errorf("%w: AppKey is required", errKind).Error(); k.Error() != want {
		t.Errorf("Kind: %q, want %q", k, want)
	}
	if !errors.Is(k, errKind) {
		t.Errorf("Kind is not its kind")
	}
}

// TestTextReadsAsFmt checks Text against %v for every type it renders.
func TestTextReadsAsFmt(t *testing.T) {
	for _, v := range []any{
		nil, "s", "", errKind, stringer{}, 3 * time.Second, true, false,
		0, -7, int64(-1 << 62), int32(5), uint(8), uint64(1 << 63), uint32(9),
		0.1, 1e21, -2.5e-7, 100.0, float32(0.1),
	} {
		if got, want := Text(v), fmt.Sprint(v); got != want {
			t.Errorf("Text(%#v) = %q, want %q", v, got, want)
		}
	}
	if got := Text([]int{1}); got != "(other)" {
		t.Errorf("Text of a slice = %q, want (other)", got)
	}
}
