package main

import (
	"io"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSummary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		stream string
		want   string // what is printed
		counts string
	}{
		{
			name: "passing package",
			stream: `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.01s\n"}
{"Action":"pass","Package":"p"}
`,
			want:   "ok  \tp\t0.01s\n",
			counts: "1 passed, 0 failed, 0 skipped",
		},
		{
			name: "failed subtest and skip",
			stream: `{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA/x","Output":"=== RUN   TestA/x\n"}
{"Action":"output","Package":"p","Test":"TestA/x","Output":"    a_test.go:9: boom\n"}
{"Action":"output","Package":"p","Test":"TestA/x","Output":"    --- FAIL: TestA/x (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestA/x"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
`,
			want:   "    a_test.go:9: boom\n    --- FAIL: TestA/x (0.00s)\n--- FAIL: TestA (0.00s)\nFAIL\nFAIL\tp\t0.01s\n",
			counts: "0 passed, 2 failed, 1 skipped",
		},
		{
			name: "build failure and a line that is not json",
			stream: `{"ImportPath":"p [p.test]","Action":"build-output","Output":"p/a.go:3:1: syntax error\n"}
{"ImportPath":"p [p.test]","Action":"build-fail"}
go: warning: something
{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}
`,
			want:   "p/a.go:3:1: syntax error\ngo: warning: something\nFAIL\tp [build failed]\n",
			counts: "0 passed, 0 failed, 0 skipped",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			s := newSummary(&out)
			if err := s.read(strings.NewReader(tc.stream)); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("printed\n%q\nwant\n%q", out.String(), tc.want)
			}
			if got := s.counts(); got != tc.counts {
				t.Errorf("counts = %q, want %q", got, tc.counts)
			}
		})
	}
}

// TestRunExitStatus checks that the command's exit status is passed on.
func TestRunExitStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"success", []string{"-c", "exit 0"}, 0},
		{"failure", []string{"-c", "exit 3"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := run(io.Discard, "sh", tc.args...); got != tc.want {
				t.Errorf("run = %d, want %d", got, tc.want)
			}
		})
	}
}
