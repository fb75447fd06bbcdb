package main

// Flag parsing shared by every subcommand: one style of help, and a bad
// flag reported once, in one line, without the help around it.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlagSet returns a flag set for `sluice NAME`: -h prints the usage
// line, the text and the flags to standard error (through parseArgs); a
// bad flag prints nothing here and comes back as a usage error, which run
// prints once.
func newFlagSet(name, usage string, s stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	h := &helpOutput{w: s.errw}
	fs.SetOutput(h)
	fs.Usage = func() {
		fmt.Fprintf(h, "usage: sluice %s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// helpOutput holds what package flag writes while it parses: it prints
// the message and the usage for every error, and the caller keeps them
// only for -h, the one case where the help is the answer.
type helpOutput struct {
	w   io.Writer
	buf bytes.Buffer
}

func (h *helpOutput) Write(p []byte) (int, error) { return h.buf.Write(p) }

// parseArgs parses flags placed anywhere among the arguments ("sluice read
// CHANNEL --position P") and returns the positional ones. "--" ends the
// flags, so a message starting with '-' can follow it. A bad flag is a
// usage error (exit code 2) naming the flag; -h prints the help and is
// flag.ErrHelp.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseFlags runs fs.Parse, printing the help only for -h and turning
// any other failure into one usage error that points at -h.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	h, ok := fs.Output().(*helpOutput) // else package flag printed it all already
	if ok {
		defer h.buf.Reset()
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		if !ok {
			return err
		}
		_, werr := h.w.Write(h.buf.Bytes())
		return errors.Join(err, werr)
	}
	return fmt.Errorf("%w: %v (sluice %s -h lists the flags)", errUsage, err, fs.Name())
}

// endpointURL is what the client commands dial for a --url (or
// SLUICE_URL): a bare host:port, as an operator copies it from a listen
// address, means ws://host:port; anything with a scheme is left to the
// client to check.
func endpointURL(s string) string {
	if s == "" || strings.Contains(s, "://") {
		return s
	}
	return "ws://" + s
}
