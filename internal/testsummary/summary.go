package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// testKey names one test (or subtest) of one package.
type testKey struct{ pkg, test string }

// summary turns a test2json stream back into go test's short output and
// counts the results.
type summary struct {
	w io.Writer
	// pending holds each running test's output until it ends: printed if
	// it fails, dropped if it passes or is skipped.
	pending                 map[testKey][]string
	passed, failed, skipped int
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, pending: make(map[testKey][]string)}
}

// read handles the stream until it ends. A line that is not an event is
// printed as it is, so nothing the command says is lost.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20) // a test may log long lines
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.w, sc.Text())
			continue
		}
		s.event(e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("testsummary: %w", err)
	}
	return nil
}

func (s *summary) event(e event) {
	if e.Action == "build-output" {
		fmt.Fprint(s.w, e.Output)
		return
	}
	if e.Test == "" {
		// The package's own lines: "ok", "FAIL", output of TestMain;
		// go test without -v does not print "PASS" either.
		if e.Action == "output" && e.Output != "PASS\n" {
			fmt.Fprint(s.w, e.Output)
		}
		return
	}
	k := testKey{e.Package, e.Test}
	switch e.Action {
	case "output":
		if !strings.HasPrefix(e.Output, "=== ") { // RUN, PAUSE, CONT, NAME: -v's framing
			s.pending[k] = append(s.pending[k], e.Output)
		}
	case "pass":
		s.passed++
		delete(s.pending, k)
	case "skip":
		s.skipped++
		delete(s.pending, k)
	case "fail":
		s.failed++
		for _, line := range s.pending[k] {
			fmt.Fprint(s.w, line)
		}
		delete(s.pending, k)
	}
}

// counts is the summary line.
func (s *summary) counts() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", s.passed, s.failed, s.skipped)
}
