// Command sluice is the one Sluice binary: the edge server and the
// command-line client.
//
//	sluice edge [--listen ADDR] [--config FILE]   serve RTM v2 over WebSocket
//	sluice pub CHANNEL [MESSAGE|-]                publish JSON values
//	sluice sub CHANNEL                            print messages as JSON lines
//	sluice read CHANNEL [--position P]            read one message
//	sluice token --appkey A --role R              mint a JWT
//	sluice bench SCENARIO                         measure an RTM v2 endpoint
//	sluice health [--ready]                       ask an edge's /healthz or /readyz
//	sluice version (--version, -v)                print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stdio carries a command's standard streams, so tests can run commands
// in-process.
type stdio struct {
	in   io.Reader
	out  io.Writer
	errw io.Writer
}

// command is one subcommand: it runs until done or ctx ends.
type command func(ctx context.Context, args []string, s stdio) error

var commands = map[string]command{
	"edge":    runEdge,
	"pub":     runPub,
	"sub":     runSub,
	"read":    runRead,
	"api":     runAPI,
	"token":   runToken,
	"bench":   runBench,
	"health":  runHealth,
	"version": runVersion,
}

const usage = `usage: sluice <command> [flags] [args]

commands:
  edge     serve RTM v2 over WebSocket (default: 127.0.0.1:8080, app "demo")
  pub      publish messages:     sluice pub CHANNEL [MESSAGE|-]
  sub      subscribe and print:  sluice sub CHANNEL
  read     read one message:     sluice read CHANNEL [--position P]
  api      server HTTP API:      sluice api METHOD '{json}' --api-key K
  token    mint a JWT:           sluice token --appkey A --role R --jwt-key K
  bench    load generator:       sluice bench fanout|channels|idle|publish
  health   ask /healthz:         sluice health [--url URL] [--ready]
  version  version, commit, Go release and protocol (also: sluice --version, -v)

Run "sluice <command> -h" for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, errw: os.Stderr}))
}

// run executes the command named by args[0] and returns the exit code:
// 0 on success, 2 for usage errors, 1 for any other failure.
func run(args []string, s stdio) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(s.errw, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	name := args[0]
	if versionFlags[name] {
		name = "version" // sluice --version is sluice version
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(s.errw, "sluice: unknown command %q\n\n%s", name, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := cmd(ctx, args[1:], s)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(s.errw, "sluice %s: %v\n", name, err)
		return 2
	}
	fmt.Fprintf(s.errw, "sluice %s: %v\n", name, err)
	return 1
}

// versionFlags are the spellings of `sluice version` as a flag.
var versionFlags = map[string]bool{"--version": true, "-version": true, "-v": true}

// errUsage marks errors in how a command was called.
var errUsage = errors.New("usage")
