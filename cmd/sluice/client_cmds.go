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

	"github.com/sluicehq/sluice/edge/auth"
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
	f.url = firstOf(f.url, os.Getenv("SLUICE_URL"), defaultURL)
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

// dial connects with the flags; the client logs warnings (reconnects) to
// standard error.
func (f *commonFlags) dial(ctx context.Context, s stdio) (*client.Client, error) {
	f.fill()
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

func (e *protoError) Error() string { return string(e.re.Code) + ": " + e.re.Reason }
func (e *protoError) Unwrap() error { return e.err }

// cliError turns an error carrying an *rtm.Error into a protoError.
func cliError(err error) error {
	if re, ok := rtm.AsError(err); ok {
		return &protoError{err: err, re: re}
	}
	return err
}

// parseArgs parses flags placed anywhere among the arguments ("sluice read
// CHANNEL --position P") and returns the positional ones. "--" ends the
// flags, so a message starting with '-' can follow it. A bad flag is a
// usage error (exit code 2); -h is flag.ErrHelp.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
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

// newFlagSet returns a flag set that reports errors (and -h) to the caller
// and prints its usage line and flags to standard error.
func newFlagSet(name, usage string, s stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.errw)
	fs.Usage = func() {
		fmt.Fprintf(s.errw, "usage: sluice %s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseMessage reads a message argument or input line: a JSON value, or
// else the text itself as a string.
func parseMessage(text string) any {
	var v any
	if err := (jsoncodec.Codec{}).DecodeBody([]byte(text), &v); err != nil {
		return text
	}
	return v
}

// writeRecord prints {"position":...,"message":...} and a newline; a zero
// position (none) prints as null.
func writeRecord(w io.Writer, pos rtm.Position, msg any) error {
	buf := []byte(`{"position":`)
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
		"Publishes MESSAGE (a JSON value; other text is sent as a string), or with - or\n"+
		"no MESSAGE one message per line of standard input, and prints the position of\n"+
		"each once the edge acknowledged it. Put -- before a MESSAGE starting with '-'.", s)
	var cf commonFlags
	cf.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: want CHANNEL [MESSAGE|-]", errUsage)
	}
	channel := pos[0]
	c, err := cf.dial(ctx, s)
	if err != nil {
		return err
	}
	defer c.Close()
	publish := func(text string) error {
		p, err := c.Publish(ctx, channel, parseMessage(text))
		if err != nil {
			return cliError(err)
		}
		_, err = fmt.Fprintln(s.out, p)
		return err
	}
	if len(pos) == 2 && pos[1] != "-" {
		return publish(pos[1])
	}
	sc := bufio.NewScanner(s.in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := publish(line); err != nil {
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
	count      int
	age        durationOrSeconds
	ff, strict bool
	id, filter string
}

// parseSub parses sub's arguments; it returns the channel ("" with a
// filter naming it).
func parseSub(args []string, s stdio) (*subFlags, string, error) {
	fs := newFlagSet("sub", "sub [flags] CHANNEL\n\n"+
		"Prints one JSON line per message: {\"position\":\"EPOCH:OFFSET\",\"message\":...}.\n"+
		"position is just after that message: --position with the last line printed\n"+
		"resumes with the next message, nothing lost or repeated (the edge is asked for\n"+
		"one message per data PDU, Sluice's batch extension). Each line is written in one\n"+
		"write, so a sub killed at any point leaves whole lines. Stops on SIGINT.", s)
	f := &subFlags{}
	f.common.register(fs)
	fs.Var(&f.start, "position", "start at this position, inclusive (EPOCH:OFFSET)")
	fs.IntVar(&f.count, "history-count", 0, "start with the last N messages")
	fs.Var(&f.age, "history-age", "start with the messages younger than this (90s, 1h, or seconds)")
	fs.BoolVar(&f.ff, "fast-forward", false, "skip messages that expired unread (reported on stderr) instead of failing with out_of_sync")
	fs.BoolVar(&f.strict, "strict", false, "exit with expired_position when, after a reconnect, the edge no longer has the position\n"+
		"to resume from (by default sub carries on from the oldest message it has, with a warning on stderr)")
	fs.StringVar(&f.id, "id", "", "subscription id (default: the channel)")
	fs.StringVar(&f.filter, "filter", "", "stream SQL view: SELECT ... FROM channel WHERE ... (needs --id)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, "", err
	}
	switch {
	case f.count < 0:
		return nil, "", fmt.Errorf("%w: negative --history-count", errUsage)
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
		// line and every line printed carries its own resume point.
		if err := writeRecord(s.out, m.Position, m.Value); err != nil {
			select {
			case failed <- err:
			default:
			}
		}
	}
	opts := &client.SubscribeOptions{
		ID: f.id, Position: f.start.p, HistoryCount: f.count, HistoryAge: f.age.d, FastForward: f.ff, Filter: f.filter,
		Strict: f.strict,
		Batch:  1, // each Message.Position is then its own message's resume point
		OnGap:  func(g client.Gap) { warnGap(s.errw, g) },
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

// listFlag collects channel patterns from repeated or comma-separated
// flags.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// runToken mints a JWT for the jwt auth extension and prints it.
func runToken(_ context.Context, args []string, s stdio) error {
	fs := newFlagSet("token", "token [flags]\n\n"+
		"Mints a JWT for the jwt auth extension (sluice pub --token ...). It is signed\n"+
		"with one of: --jwt-key, the app's jwt_key (an HMAC secret); --jwt-key-file, a\n"+
		"PEM private key whose public key is the app's jwt_key_file; or --config and\n"+
		"--appkey, to take the app's jwt_key from the edge's config file.", s)
	role := fs.String("role", "", "role the token grants (env SLUICE_ROLE)")
	var publish, subscribe listFlag
	fs.Var(&publish, "publish", "channel patterns the token may publish to, on top of the role's (repeatable, comma-separated)")
	fs.Var(&subscribe, "subscribe", "channel patterns the token may subscribe to, on top of the role's (repeatable, comma-separated)")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	subject := fs.String("subject", "", "who the token is for (sub claim; edges log it)")
	secret := fs.String("jwt-key", "", "HMAC secret of the app, 32 bytes or more (env SLUICE_JWT_KEY)")
	keyFile := fs.String("jwt-key-file", "", "PEM private key (RSA, ECDSA or Ed25519)")
	configPath := fs.String("config", "", "edge config file holding the app's jwt_key")
	appkey := fs.String("appkey", "", "app whose jwt_key --config provides (env SLUICE_APPKEY; default "+defaultAppkey+")")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	*role = firstOf(*role, os.Getenv("SLUICE_ROLE"))
	if *role == "" && len(publish) == 0 && len(subscribe) == 0 {
		return fmt.Errorf("%w: the token would grant nothing: set --role, --publish or --subscribe", errUsage)
	}
	if *ttl <= 0 {
		return fmt.Errorf("%w: --ttl must be positive", errUsage)
	}
	key, err := signingKey(*secret, *keyFile, *configPath, firstOf(*appkey, os.Getenv("SLUICE_APPKEY"), defaultAppkey))
	if err != nil {
		return err
	}
	now := time.Now()
	tok, err := auth.Mint(key, auth.Claims{
		Role: *role, Publish: publish, Subscribe: subscribe,
		Expires: now.Add(*ttl), IssuedAt: now, Subject: *subject,
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.out, tok)
	return err
}

// signingKey loads the key of `sluice token` from exactly one source; the
// environment's SLUICE_JWT_KEY counts only when no flag names one.
func signingKey(secret, keyFile, configPath, appkey string) (any, error) {
	n := 0
	for _, v := range []string{secret, keyFile, configPath} {
		if v != "" {
			n++
		}
	}
	if n == 0 {
		secret = os.Getenv("SLUICE_JWT_KEY")
		if secret == "" {
			return nil, fmt.Errorf("%w: no signing key: set --jwt-key, --jwt-key-file or --config", errUsage)
		}
	}
	if n > 1 {
		return nil, fmt.Errorf("%w: set only one of --jwt-key, --jwt-key-file and --config", errUsage)
	}
	switch {
	case keyFile != "":
		data, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, err
		}
		k, err := auth.ParsePrivateKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keyFile, err)
		}
		return k, nil
	case configPath != "":
		cfg, err := LoadConfig(configPath)
		if err != nil {
			return nil, err
		}
		for _, a := range cfg.Apps {
			if a.Appkey != appkey {
				continue
			}
			if a.JWTKey == "" {
				return nil, fmt.Errorf("app %q in %s has no jwt_key (for a jwt_key_file, sign with --jwt-key-file and the private key)", appkey, configPath)
			}
			return []byte(a.JWTKey), nil
		}
		return nil, fmt.Errorf("no app %q in %s", appkey, configPath)
	}
	return []byte(secret), nil
}
