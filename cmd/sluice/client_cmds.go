package main

// What the client-side commands share: pub (pub.go), sub (sub.go) and read
// (read.go) speak RTM v2 to an edge through the Go client (wasm/client),
// with the same connection flags, errors and output records.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

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

// checkChannel refuses a CHANNEL argument the edge would refuse, as a
// usage error (exit 2, nothing sent), with the rule it breaks.
func checkChannel(name string) error {
	if err := rtm.ChannelFormatError(name); err != nil {
		return fmt.Errorf("%w: CHANNEL %q: %s", errUsage, name, err.Reason)
	}
	return nil
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
			reason = re.Reason // without the RTM code, meant for the edge's replies
		}
		// The codec words a refusal the same for every client, without
		// saying where the text goes wrong; for the user's own text,
		// encoding/json's syntax error does.
		var raw json.RawMessage
		if jerr := json.Unmarshal([]byte(text), &raw); jerr != nil {
			reason = jerr.Error()
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
