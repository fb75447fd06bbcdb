package edgecmd

import (
	"os"
	"path/filepath"
	"testing"
)

// The limit in force comes from the config, else GOMEMLIMIT (left to the
// runtime), else a share of the cgroup's limit, else there is none.
func TestMemoryLimit(t *testing.T) {
	cgroup := func(n int64, ok bool) func() (int64, bool) {
		return func() (int64, bool) { return n, ok }
	}
	for _, tc := range []struct {
		name       string
		configured Size
		env        string
		cgroup     func() (int64, bool)
		limit      int64
		from       string
	}{
		{"configured", 512 << 20, "1GiB", cgroup(4<<30, true), 512 << 20, "limits.memory"},
		{"GOMEMLIMIT", 0, "1GiB", cgroup(4<<30, true), 0, ""},
		{"GOMEMLIMIT off", 0, "off", cgroup(1<<30, true), (1 << 30) / 100 * cgroupPercent, "cgroup"},
		{"cgroup", 0, "", cgroup(1<<30, true), (1 << 30) / 100 * cgroupPercent, "cgroup"},
		{"none", 0, "", cgroup(0, false), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit, from := memoryLimit(tc.configured, tc.env, tc.cgroup)
			if limit != tc.limit || from != tc.from {
				t.Fatalf("memoryLimit = %d from %q, want %d from %q", limit, from, tc.limit, tc.from)
			}
		})
	}
}

// A cgroup's file says its limit, or that it has none: "max" (v2) or the
// page-rounded largest number (v1).
func TestParseCgroupMax(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		want          int64
		ok            bool
	}{
		{"v2 limit", "1073741824\n", 1 << 30, true},
		{"v2 none", "max\n", 0, false},
		{"v1 none", "9223372036854771712\n", 0, false},
		{"garbage", "lots\n", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, tc.name)
			if err := os.WriteFile(f, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if n, ok := parseCgroupMax(f); n != tc.want || ok != tc.ok {
				t.Fatalf("parseCgroupMax(%q) = %d, %v; want %d, %v", tc.content, n, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := parseCgroupMax(filepath.Join(dir, "absent")); ok {
		t.Fatal("a missing file gave a limit")
	}
}
