package main

// sluice pub: publish a message, or one per line of standard input.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sluicehq/sluice/wasm/client"
)

// runPub publishes MESSAGE, or one message per line of standard input, and
// prints the position of each once acknowledged.
func runPub(ctx context.Context, args []string, s stdio) error {
	fs := newFlagSet("pub", "pub [flags] CHANNEL [MESSAGE|-]\n\n"+
		"Publishes MESSAGE, a JSON value, or with - or no MESSAGE one JSON value per\n"+
		"line of standard input, and prints the position (EPOCH:OFFSET) of each once\n"+
		"the edge acknowledged it. Text that is not JSON is refused, unless --string\n"+
		"sends it as a string. Put -- before a MESSAGE starting with '-'.", s)
	var cf commonFlags
	cf.register(fs)
	asString := fs.Bool("string", false, "send MESSAGE (or each line) as a string, not as JSON")
	excludeSelf := fs.Bool("exclude-self", false, "publish with exclude_self: not to this connection's own subscriptions (it has none; the edge still checks and stores it)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: want CHANNEL [MESSAGE|-]", errUsage)
	}
	channel := pos[0]
	if err := checkChannel(channel); err != nil {
		return err
	}
	var single any
	if len(pos) == 2 && pos[1] != "-" {
		// Checked before dialing: a bad argument sends nothing.
		if single, err = parseMessage(pos[1], *asString); err != nil {
			return fmt.Errorf("%w: MESSAGE is %v", errUsage, err)
		}
	}
	c, err := cf.dial(ctx, s)
	if err != nil {
		return err
	}
	defer c.Close()
	var po []client.PublishOption
	if *excludeSelf {
		po = append(po, client.ExcludeSelf())
	}
	publish := func(msg any) error {
		p, err := c.Publish(ctx, channel, msg, po...)
		if err != nil {
			return cliError(err)
		}
		_, err = fmt.Fprintln(s.out, p)
		return err
	}
	if len(pos) == 2 && pos[1] != "-" {
		return publish(single)
	}
	return publishLines(s.in, *asString, publish)
}

// publishLines publishes each non-blank line of in, in order, and stops
// at the first line that is not a message, naming it: the lines before
// it are published (their positions printed), it and those after are not.
func publishLines(in io.Reader, asString bool, publish func(any) error) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !asString {
			line = strings.TrimSpace(line)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		msg, err := parseMessage(line, asString)
		if err != nil {
			return fmt.Errorf("standard input, line %d: %w", n, err)
		}
		if err := publish(msg); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read standard input: %w", err)
	}
	return nil
}
