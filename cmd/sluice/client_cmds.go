package main

// The client-side commands: pub, sub and read speak RTM v2 to an edge
// through the Go client (wasm/client); token mints JWTs for its jwt
// extension.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// Defaults of the client commands: what `make run` serves.
const (
	defaultURL    = "ws://127.0.0.1:8080"
	defaultAppkey = "demo"
)

// commonFlags are the connection flags of pub, sub and read. Each falls
// back to an environment variable, then to a default.
type commonFlags struct {
	url, appkey, role, secret, token, codec string
}

// register adds the flags to fs.
func (f *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "edge endpoint, ws:// or wss:// (env SLUICE_URL; default "+defaultURL+")")
	f.registerAuth(fs)
}

// registerAuth adds the flags but --url to fs.
func (f *commonFlags) registerAuth(fs *flag.FlagSet) {
	fs.StringVar(&f.appkey, "appkey", "", "appkey (env SLUICE_APPKEY; default "+defaultAppkey+")")
	fs.StringVar(&f.role, "role", "", "role to authenticate as, with --secret (env SLUICE_ROLE; default: the app's default role)")
	fs.StringVar(&f.secret, "secret", "", "role secret (env SLUICE_SECRET)")
	fs.StringVar(&f.token, "token", "", "JWT to authenticate with instead of a role secret (env SLUICE_TOKEN)")
	fs.StringVar(&f.codec, "codec", "", "wire encoding: msgpack, json or cbor (default msgpack)")
}

// fill applies the environment and the defaults to flags left empty.
func (f *commonFlags) fill() {
	f.url = endpointURL(firstOf(f.url, os.Getenv("SLUICE_URL"), defaultURL))
	f.appkey = firstOf(f.appkey, os.Getenv("SLUICE_APPKEY"), defaultAppkey)
	f.role = firstOf(f.role, os.Getenv("SLUICE_ROLE"))
	f.secret = firstOf(f.secret, os.Getenv("SLUICE_SECRET"))
	f.token = firstOf(f.token, os.Getenv("SLUICE_TOKEN"))
}

// firstOf returns the first non-empty string.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// check refuses credentials that do not go together, naming the flags
// and variables the user sets (the client's own check names its Options
// fields, which a command-line user never sees).
func (f *commonFlags) check() error {
	switch {
	case f.role != "" && f.token != "":
		return fmt.Errorf("%w: set --token (SLUICE_TOKEN) or --role (SLUICE_ROLE), not both", errUsage)
	case f.role != "" && f.secret == "":
		return fmt.Errorf("%w: role %q needs its secret: set --secret or SLUICE_SECRET", errUsage, f.role)
	case f.role == "" && f.secret != "":
		return fmt.Errorf("%w: a secret needs its role: set --role or SLUICE_ROLE", errUsage)
	}
	return nil
}

// dial connects with the flags; the client logs warnings (reconnects) to
// standard error.
func (f *commonFlags) dial(ctx context.Context, s stdio) (*client.Client, error) {
	f.fill()
	if err := f.check(); err != nil {
		return nil, err
	}
	opts := &client.Options{
		AppKey: f.appkey, Role: f.role, RoleSecret: f.secret, Token: f.token, Codec: f.codec,
		Logger: slog.New(slog.NewTextHandler(s.errw, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	c, err := client.Dial(ctx, f.url, opts)
	if errors.Is(err, client.ErrOptions) || errors.Is(err, client.ErrURL) {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	return c, cliError(err)
}

// protoError shows a refusal by the edge as "code: reason", the form a
// user greps for, keeping the full chain for errors.Is and errors.As.
type protoError struct {
	err error
	re  *rtm.Error
}

func (e *protoError) Error() string {
	msg := string(e.re.Code) + ": " + e.re.Reason
	if what := e.request(); what != "" {
		msg += " (" + what + ")"
	}
	return msg
}

// request says what was refused when the edge's reason does not: the
// fixed texts Satori's service answered (Unauthorized, Unauthenticated),
// which Sluice's edge answers too, name nothing, while the client's
// wrapping of the error names the request ("client: publish to "x": ...").
func (e *protoError) request() string {
	switch e.re.Reason {
	case "Unauthorized", "Unauthenticated":
	default:
		return ""
	}
	what := strings.TrimPrefix(e.err.Error(), "client: ")
	what, _, _ = strings.Cut(what, ": "+e.re.Error())
	if what == e.re.Error() {
		return ""
	}
	return what
}
func (e *protoError) Unwrap() error { return e.err }

// cliError turns an error carrying an *rtm.Error into a protoError.
func cliError(err error) error {
	if re, ok := rtm.AsError(err); ok {
		return &protoError{err: err, re: re}
	}
	return err
}

// parseMessage reads a message argument or input line: a JSON value, or
// with asString the text itself as a string. Text that is not JSON is
// refused rather than sent as a string, so that a typo in a JSON value
// ('{bad json') is not published as something else.
func parseMessage(text string, asString bool) (any, error) {
	if asString {
		return text, nil
	}
	var v any
	if err := (jsoncodec.Codec{}).DecodeBody([]byte(text), &v); err != nil {
		reason := err.Error()
		if re, ok := rtm.AsError(err); ok {
			// Without the codec's RTM code and preamble, meant for the
			// edge's replies.
			reason = strings.TrimPrefix(re.Reason, "body is not valid JSON: ")
		}
		return nil, fmt.Errorf("not a JSON value: %s; --string sends text as a string", reason)
	}
	return v, nil
}

// writeRecord prints {"position":...,"message":...} and a newline; a zero
// position (none) prints as null.
func writeRecord(w io.Writer, pos rtm.Position, msg any) error {
	return writeChannelRecord(w, "", pos, msg)
}

// writeChannelRecord is writeRecord, with "channel" first when channel is
// not empty (a message of sluice sub --prefix).
func writeChannelRecord(w io.Writer, channel string, pos rtm.Position, msg any) error {
	buf := []byte(`{`)
	if channel != "" {
		buf = append(buf, `"channel":`...)
		var err error
		if buf, err = (jsoncodec.Codec{}).AppendValue(buf, channel); err != nil {
			return fmt.Errorf("format channel: %w", err)
		}
		buf = append(buf, ',')
	}
	buf = append(buf, `"position":`...)
	if pos == (rtm.Position{}) {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '"')
		buf = pos.AppendText(buf)
		buf = append(buf, '"')
	}
	buf = append(buf, `,"message":`...)
	buf, err := (jsoncodec.Codec{}).AppendValue(buf, msg)
	if err != nil {
		return fmt.Errorf("format message: %w", err)
	}
	buf = append(buf, "}\n"...)
	_, err = w.Write(buf)
	return err
}

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
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: want CHANNEL [MESSAGE|-]", errUsage)
	}
	channel := pos[0]
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
	publish := func(msg any) error {
		p, err := c.Publish(ctx, channel, msg)
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
