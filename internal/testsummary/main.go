// Command testsummary runs a `go test -json` command line and prints what
// `go test` without -v would: each package's result line, the output of
// the tests that failed and any build errors; then one line,
// "N passed, N failed, N skipped", counting tests and subtests. It exits
// with the command's exit status, so `make test` fails exactly when go
// test does. Usage:
//
//	go run ./internal/testsummary go test -json ./...
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testsummary go test -json [flags] [packages]")
		os.Exit(2)
	}
	os.Exit(run(os.Stdout, os.Args[1], os.Args[2:]...))
}

// run runs the command, summarizing its standard output on w, and
// returns its exit status.
func run(w io.Writer, name string, args ...string) int {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		return 1
	}
	s := newSummary(w)
	readErr := s.read(out)
	err = cmd.Wait()
	fmt.Fprintln(w, s.counts())
	if readErr != nil {
		// The command's output went unread from here on; its status
		// still decides, as it does without the summary.
		fmt.Fprintln(os.Stderr, "testsummary: reading the test output:", readErr)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		return 1
	}
	return 0
}
