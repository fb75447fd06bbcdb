package codec_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
)

// TestShellSortedKeys checks that the browser's SortedKeys gives the order
// of the native one.
func TestShellSortedKeys(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 5, 16, 17, 100} {
		t.Run(strings.Repeat("k", min(n, 3)), func(t *testing.T) {
			m := map[string]any{}
			for i := range n {
				m[string(rune('a'+i%26))+string(rune('A'+i/26))] = i
			}
			if got, want := codec.ShellSortedKeys(nil, m), codec.SortedKeys(nil, m); !reflect.DeepEqual(got, want) {
				t.Fatalf("n=%d: %v, want %v", n, got, want)
			}
		})
	}
}
