package main

// sluice read: a channel's newest message, or the one at a position.

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/wasm/client"
)

// runRead prints a channel's newest message, or the one at --position, as
// {"position":...,"message":...}; both are null when there is none.
func runRead(ctx context.Context, args []string, s stdio) error {
	fs := newFlagSet("read", "read [flags] CHANNEL [--position P]\n\n"+
		"Prints the newest message of CHANNEL, or the one at --position, as\n"+
		"{\"position\":\"EPOCH:OFFSET\",\"message\":...}.", s)
	var cf commonFlags
	cf.register(fs)
	var at positionFlag
	fs.Var(&at, "position", "read the message at this position (EPOCH:OFFSET)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want CHANNEL", errUsage)
	}
	if err := checkChannel(pos[0]); err != nil {
		return err
	}
	c, err := cf.dial(ctx, s)
	if err != nil {
		return err
	}
	defer c.Close()
	var opts []client.ReadOption
	if at.p != nil {
		opts = append(opts, client.AtPosition(*at.p))
	}
	msg, p, err := c.Read(ctx, pos[0], opts...)
	if err != nil {
		return cliError(err)
	}
	return writeRecord(s.out, p, msg)
}
