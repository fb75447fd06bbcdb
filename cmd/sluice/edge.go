package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
)

// runEdge serves RTM v2 until ctx ends (SIGINT, SIGTERM), then drains: it
// reports not-ready, refuses new connections, closes open ones with 1001
// "going away" and returns within the shutdown timeout (edgecmd.Run).
func runEdge(ctx context.Context, args []string, s stdio) error {
	cfg, f, err := edgeConfig(args, s)
	if err != nil {
		return err
	}
	if f.checkPath != "" {
		return reportConfig(s, cfg, f.checkPath, f.strict)
	}
	return edgecmd.Run(ctx, cfg, &edgecmd.Options{Stdout: s.out, Stderr: s.errw, ReadyFile: f.readyFile, Version: Version(), Program: program()})
}

// edgeFlags are the edge's flags that are not configuration.
type edgeFlags struct {
	checkPath string // --check-config's file: validate, report, exit
	strict    bool   // --strict: with --check-config, a warning fails the check
	readyFile string // --ready-file's path, "" for none
}

const edgeUsage = `edge [flags]

Serves RTM v2 over WebSocket, the demo pages and the browser client. Without
--config: the app "demo" on 127.0.0.1:8080, in memory. Flags override the
config file. Each flag may be set in the environment instead, as SLUICE_ and
its name in capitals (SLUICE_CONFIG, SLUICE_DATA_DIR); the command line wins.
Stops on SIGINT or SIGTERM, draining connections first.`

// edgeConfig parses the edge's flags and loads its configuration: the
// file's (or the default), with the flags given written over it.
func edgeConfig(args []string, s stdio) (*edgecmd.Config, edgeFlags, error) {
	fs := newFlagSet("edge", edgeUsage, s)
	listen := fs.String("listen", "", "address to serve on (default 127.0.0.1:8080, :443 with TLS, or the config's listen)")
	configPath := fs.String("config", "", "YAML config file (default: embedded single-node config with app \"demo\")")
	checkPath := fs.String("check-config", "", "validate this YAML config file (with the other flags given), print its warnings and exit: 0 if valid")
	strict := fs.Bool("strict", false, "with --check-config: exit 1 on any warning too (a placeholder jwt_key, ...)")
	readyFile := fs.String("ready-file", "", "once listening, write the edge's URL, addresses, appkeys and pid to this file as JSON; removed on exit")
	logLevel := fs.String("log-level", "", "log level: debug, info, warn, error (default info)")
	logFormat := fs.String("log-format", "", "log format: text or json (default text)")
	var ops opsFlags
	ops.register(fs)
	var cl clusterFlags
	cl.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, edgeFlags{}, err
	}
	if fs.NArg() > 0 {
		return nil, edgeFlags{}, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if err := setFromEnv(fs, os.LookupEnv); err != nil {
		return nil, edgeFlags{}, err
	}
	if err := checkFlags(*checkPath, configPath, *strict); err != nil {
		return nil, edgeFlags{}, err
	}
	cfg := edgecmd.DefaultConfig()
	if *configPath != "" {
		var err error
		if cfg, err = edgecmd.ReadConfig(*configPath); err != nil {
			return nil, edgeFlags{}, err
		}
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *logLevel != "" {
		cfg.Log.Level = *logLevel
	}
	if *logFormat != "" {
		cfg.Log.Format = *logFormat
	}
	ops.apply(cfg)
	cl.apply(cfg)
	if err := cfg.Validate(); err != nil {
		if *configPath == "" {
			return nil, edgeFlags{}, err
		}
		// The file and the flags are checked together: say which it was
		// when it may have been either.
		where := "config " + *configPath
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "config" && f.Name != "check-config" && f.Name != "strict" && f.Name != "ready-file" {
				where = "config " + *configPath + " with the command line's flags"
			}
		})
		return nil, edgeFlags{}, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, edgeFlags{checkPath: *checkPath, strict: *strict, readyFile: *readyFile}, nil
}

// checkFlags checks --check-config's flags and makes its file the one
// loaded: --config may name it too, no other; --strict is for it alone.
func checkFlags(checkPath string, configPath *string, strict bool) error {
	switch {
	case strict && checkPath == "":
		return fmt.Errorf("%w: --strict is for --check-config FILE", errUsage)
	case checkPath == "":
		return nil
	case *configPath != "" && *configPath != checkPath:
		return fmt.Errorf("%w: --check-config %s and --config %s name different files", errUsage, checkPath, *configPath)
	}
	*configPath = checkPath
	return nil
}

// reportConfig is what --check-config prints of a valid configuration:
// its warnings on stderr, then one line on stdout; with strict, a
// warning fails the check (exit 1) instead, as a deploy script wants.
func reportConfig(s stdio, cfg *edgecmd.Config, path string, strict bool) error {
	ws := cfg.Warnings()
	for _, w := range ws {
		fmt.Fprintf(s.errw, "warning: %s\n", w)
	}
	if strict && len(ws) > 0 {
		return fmt.Errorf("config %s: valid, but with %d warning(s), which --strict refuses", path, len(ws))
	}
	what := "valid"
	if len(ws) > 0 {
		what = fmt.Sprintf("valid, with %d warning(s)", len(ws))
	}
	_, err := fmt.Fprintf(s.out, "config %s: %s\n", path, what)
	return err
}

// program is how the operator ran this binary, for the commands the
// edge's banner suggests: as typed when it has a path (./bin/sluice),
// else "sluice" (found on the PATH).
func program() string {
	if p := os.Args[0]; strings.ContainsRune(p, '/') {
		return p
	}
	return "sluice"
}
