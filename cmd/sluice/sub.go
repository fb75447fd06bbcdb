package main

// sluice sub: subscribe to a channel and print its messages as JSON lines.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// durationOrSeconds is a flag value taking "90s", "1h" or a plain number of
// seconds.
type durationOrSeconds struct{ d time.Duration }

func (v *durationOrSeconds) String() string { return v.d.String() }

func (v *durationOrSeconds) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		v.d = time.Duration(n * float64(time.Second))
	} else if v.d, err = time.ParseDuration(s); err != nil {
		return errors.New("want a duration (90s, 1h) or a number of seconds")
	}
	if v.d < 0 {
		return errors.New("negative duration")
	}
	return nil
}

// positionFlag is a flag value holding an optional position.
type positionFlag struct{ p *rtm.Position }

func (v *positionFlag) String() string {
	if v.p == nil {
		return ""
	}
	return v.p.String()
}

func (v *positionFlag) Set(s string) error {
	p, err := rtm.ParsePosition(s)
	if err != nil {
		return errors.New("want EPOCH:OFFSET")
	}
	v.p = &p
	return nil
}

// subFlags are the flags of sub.
type subFlags struct {
	common     commonFlags
	start      positionFlag
	after      positionFlag
	count      int
	age        durationOrSeconds
	ff, strict bool
	changes    bool
	prefix     bool
	id, filter string
	period     int
}

// parseSub parses sub's arguments; it returns the channel ("" with a
// filter naming it).
func parseSub(args []string, s stdio) (*subFlags, string, error) {
	fs := newFlagSet("sub", "sub [flags] CHANNEL\n\n"+
		"Prints one JSON line per message: {\"position\":\"EPOCH:OFFSET\",\"message\":...},\n"+
		"where position is that message's own, the one pub printed for it. --after with\n"+
		"the last line's position resumes with the next message, nothing lost or\n"+
		"repeated; --position starts at a message, inclusive. Each line is written in\n"+
		"one write, so a sub killed at any point leaves whole lines. Stops on SIGINT.", s)
	f := &subFlags{}
	f.common.register(fs)
	fs.Var(&f.start, "position", "start at this position, inclusive: the message at P first (EPOCH:OFFSET)")
	fs.Var(&f.after, "after", "start after this position: the message after P first (a line's position, to resume)")
	fs.IntVar(&f.count, "history-count", 0, "start with the last N messages")
	fs.Var(&f.age, "history-age", "start with the messages younger than this (90s, 1h, or seconds)")
	fs.BoolVar(&f.prefix, "prefix", false, "every channel whose name starts with CHANNEL; each line names its \"channel\"\n"+
		"(after a reconnect it goes on with new messages: positions are per channel)")
	fs.BoolVar(&f.changes, "only-changes", false, "skip a message equal to the one before it (RTM's only: value_changes)")
	fs.BoolVar(&f.ff, "fast-forward", false, "skip messages that expired unread (reported on stderr) instead of failing with out_of_sync")
	fs.BoolVar(&f.strict, "strict", false, "exit with expired_position when, after a reconnect, the edge no longer has the position\n"+
		"to resume from (by default sub carries on from the oldest message it has, with a warning on stderr)")
	fs.StringVar(&f.id, "id", "", "subscription id (default: the channel)")
	fs.StringVar(&f.filter, "filter", "", "stream SQL view: SELECT ... FROM channel WHERE ... (needs --id)")
	fs.IntVar(&f.period, "period", 0, "seconds per result of an aggregate --filter (COUNT, GROUP BY, ...; default 1, at most 60)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, "", err
	}
	switch {
	case f.start.p != nil && f.after.p != nil:
		return nil, "", fmt.Errorf("%w: set --position or --after, not both", errUsage)
	case f.count < 0:
		return nil, "", fmt.Errorf("%w: negative --history-count", errUsage)
	case f.period != 0 && f.filter == "":
		return nil, "", fmt.Errorf("%w: --period needs --filter", errUsage)
	case f.prefix && (f.start.p != nil || f.after.p != nil || f.filter != ""):
		return nil, "", fmt.Errorf("%w: --prefix takes no --position, --after or --filter", errUsage)
	case f.period < 0 || f.period > 60:
		return nil, "", fmt.Errorf("%w: --period %d is not from 1 to 60 seconds", errUsage, f.period)
	case len(pos) == 1:
		if err := checkChannel(pos[0]); err != nil {
			return nil, "", err
		}
		return f, pos[0], nil
	case len(pos) == 0 && f.filter != "":
		return f, "", nil
	}
	return nil, "", fmt.Errorf("%w: want CHANNEL", errUsage)
}

// runSub prints every message of a subscription as a JSON line until
// SIGINT (exit 0) or until the subscription ends (exit 1 with the edge's
// error: out_of_sync, or expired_position with --strict). A gap (the edge
// restarted, or the connection stayed down past retention) is a warning
// on stderr, and the subscription carries on.
func runSub(ctx context.Context, args []string, s stdio) error {
	f, channel, err := parseSub(args, s)
	if err != nil {
		return err
	}
	c, err := f.common.dial(ctx, s)
	if err != nil {
		return err
	}
	defer c.Close()
	failed := make(chan error, 1)
	handler := func(m client.Message) {
		// Unbuffered: one write per line, so that a kill leaves no torn
		// line and every line printed carries its own position.
		if err := writeChannelRecord(s.out, m.Channel, ownPosition(m), m.Value); err != nil {
			select {
			case failed <- err:
			default:
			}
		}
	}
	start := f.start.p
	if f.after.p != nil {
		// The first message after P: subscribing is inclusive and finds
		// the first offset at or past P's + 1, however offsets skip.
		next := f.after.p.Next()
		start = &next
	}
	opts := &client.SubscribeOptions{
		ID: f.id, Position: start, HistoryCount: f.count, HistoryAge: f.age.d, FastForward: f.ff, Filter: f.filter,
		Period: time.Duration(f.period) * time.Second, Strict: f.strict, OnlyChanges: f.changes, Prefix: f.prefix,
		Batch: 1, // each message then has its own PDU, so its own position (ownPosition)
		OnGap: func(g client.Gap) { warnGap(s.errw, g) },
	}
	sub, err := c.Subscribe(ctx, channel, opts, handler)
	if err != nil {
		if f.after.p != nil {
			return afterError(err, *f.after.p, *start)
		}
		return cliError(err)
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-failed:
		return fmt.Errorf("write: %w", err)
	case <-sub.Done():
		return cliError(sub.Err())
	}
}

// ownPosition returns the position of the message itself, which pub
// printed: an rtm/subscription/data position is the one just after the
// PDU's last message, its offset + 1 (the protocol's rule), so the last
// message of a PDU is at that offset - 1. With the batch extension every
// message is the last of its PDU; from an edge that ignores it, the
// others' positions are not known and print as null.
func ownPosition(m client.Message) rtm.Position {
	if !m.EndOfBatch || m.Position.Offset == 0 {
		return rtm.Position{}
	}
	return rtm.Position{Epoch: m.Position.Epoch, Offset: m.Position.Offset - 1}
}

// warnGap says on stderr that messages may be missing, and from where.
func warnGap(w io.Writer, g client.Gap) {
	skipped := "an unknown number of messages"
	if g.MissedMessageCount > 0 {
		skipped = fmt.Sprintf("%d messages", g.MissedMessageCount)
	}
	fmt.Fprintf(w, "sluice sub: warning: messages may be missing (%s): %s; continuing at %s instead of %s\n",
		skipped, g.Reason, g.Resumed, g.Requested)
}

// afterError words the edge's refusal of `sub --after P` with P, as the
// user typed it: sub asks for the message after P, at P's offset + 1
// (runSub), and the edge's reason names that position, which the user
// never saw ("position 1:100000 has expired" for --after 1:99999). When P
// + 1 has expired, so has P, or it belongs to another history.
func afterError(err error, typed, asked rtm.Position) error {
	re, ok := rtm.AsError(err)
	if !ok {
		return err
	}
	at := regexp.MustCompile(`(^|[^0-9])` + regexp.QuoteMeta(asked.String()) + `($|[^0-9])`)
	if !at.MatchString(re.Reason) {
		return cliError(err)
	}
	worded := *re
	worded.Reason = at.ReplaceAllString(re.Reason, "${1}"+typed.String()+"${2}") + " (sub --after " + typed.String() + ")"
	return &protoError{err: err, re: &worded}
}
