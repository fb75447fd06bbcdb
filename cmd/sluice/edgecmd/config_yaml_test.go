package edgecmd

import (
	"testing"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want Size
		bad  bool
	}{
		{name: "bytes", in: "1024", want: 1024},
		{name: "B", in: "10B", want: 10},
		{name: "KiB", in: "64KiB", want: 64 << 10},
		{name: "MiB spaced", in: "64 MiB", want: 64 << 20},
		{name: "GiB", in: "4GiB", want: 4 << 30},
		{name: "TiB", in: "1TiB", want: 1 << 40},
		{name: "KB", in: "10KB", want: 10000},
		{name: "MB", in: "64MB", want: 64e6},
		{name: "GB", in: "2GB", want: 2e9},
		{name: "TB", in: "1TB", want: 1e12},
		{name: "zero", in: "0", want: 0},
		{name: "unknown unit", in: "4XB", bad: true},
		{name: "lower case", in: "4kib", bad: true},
		{name: "negative", in: "-1KiB", bad: true},
		{name: "plus", in: "+1", bad: true},
		{name: "fraction", in: "1.5GiB", bad: true},
		{name: "unit only", in: "MiB", bad: true},
		{name: "empty", in: "", bad: true},
		{name: "overflow", in: "9000000TiB", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSize(tt.in)
			if (err != nil) != tt.bad || got != tt.want {
				t.Fatalf("ParseSize(%q) = %d, %v", tt.in, got, err)
			}
			if !tt.bad {
				back, err := ParseSize(got.String())
				if err != nil || back != got {
					t.Fatalf("ParseSize(%q.String() = %q) = %d, %v", tt.in, got.String(), back, err)
				}
			}
		})
	}
}

// FuzzParseSize checks that ParseSize never panics and that what it
// accepts formats back to the same size.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "1024", "64KiB", "4 GiB", "10KB", "1.5GiB", "-1", "9223372036854775807", "8TiB", "MiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		back, err := ParseSize(n.String())
		if err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d, but ParseSize(%q) = %d, %v", s, n, n.String(), back, err)
		}
	})
}

// FuzzParseConfig checks that no file makes the loader panic, and that a
// file it accepts validates or fails with an error.
func FuzzParseConfig(f *testing.F) {
	f.Add(fullConfig)
	f.Add("")
	f.Add("limits: {store_bytes: 4XB}\n")
	f.Add("apps:\n  - appkey: a\n    roles:\n      default: {publish: [*]}\n")
	f.Add("listen: &a [*a]\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := parseConfig([]byte(text))
		if err != nil {
			return
		}
		_ = c.Validate() // must not panic
	})
}

// TestDrainDefaults: the drain's delay and spread have defaults, the
// spread within the shutdown timeout, and 0s turns either off.
