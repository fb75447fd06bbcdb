//go:build js && wasm

package bridge

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// connectOptions is what clientOptions reads, in values a test compares:
// the logger by the console methods its lines reach, the token function
// by its presence (TestTokenFunction calls it).
type connectOptions struct {
	AppKey, Role, RoleSecret, Token     string
	MinBackoff, MaxBackoff, DialTimeout time.Duration
	DeliveryBufferBytes                 int
	Timeout                             time.Duration
	Logs                                string // e.g. "warn,error"
	TokenFunc                           bool
}

// consoleLines logs a line at each level through l and returns the
// console methods called, comma-separated.
func consoleLines(t *testing.T, l *client.Logger) string {
	t.Helper()
	restore := jsEval(t, `(() => {
		const saved = {}, calls = [];
		for (const m of ["debug", "info", "warn", "error"]) {
			saved[m] = console[m];
			console[m] = () => calls.push(m);
		}
		return () => { Object.assign(console, saved); return calls.join(","); };
	})()`)
	l.Debug("d")
	l.Info("i")
	l.Warn("w")
	l.Error("e")
	return restore.Invoke().String()
}

func TestClientOptions(t *testing.T) {
	tests := []struct {
		name string
		src  string // connect's options, a JavaScript expression
		want connectOptions
	}{
		{name: "undefined", src: "undefined", want: connectOptions{Timeout: defaultTimeout, Logs: "warn,error"}},
		{name: "null", src: "null", want: connectOptions{Timeout: defaultTimeout, Logs: "warn,error"}},
		{name: "empty", src: "({})", want: connectOptions{Timeout: defaultTimeout, Logs: "warn,error"}},
		{name: "null members are unset", src: "({appkey: null, timeout: null, logLevel: undefined})",
			want: connectOptions{Timeout: defaultTimeout, Logs: "warn,error"}},
		{name: "every option", src: `({appkey: "a", minBackoff: 10, maxBackoff: 2000, dialTimeout: 1.5, timeout: 100,
			deliveryBufferBytes: 1024, logLevel: "debug"})`,
			want: connectOptions{AppKey: "a", MinBackoff: 10 * time.Millisecond, MaxBackoff: 2 * time.Second,
				DialTimeout: 1500 * time.Microsecond, Timeout: 100 * time.Millisecond, DeliveryBufferBytes: 1024, Logs: "debug,info,warn,error"}},
		{name: "role and secret", src: `({appkey: "a", role: "admin", secret: "s3"})`,
			want: connectOptions{AppKey: "a", Role: "admin", RoleSecret: "s3", Timeout: defaultTimeout, Logs: "warn,error"}},
		{name: "token string", src: `({token: "jwt"})`, want: connectOptions{Token: "jwt", Timeout: defaultTimeout, Logs: "warn,error"}},
		{name: "token function", src: `({token: () => "jwt"})`, want: connectOptions{TokenFunc: true, Timeout: defaultTimeout, Logs: "warn,error"}},
		{name: "log off", src: `({logLevel: "off"})`, want: connectOptions{Timeout: defaultTimeout, Logs: ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			co, timeout, err := clientOptions(jsEval(t, tt.src))
			if err != nil {
				t.Fatalf("clientOptions(%s): %v", tt.src, err)
			}
			got := connectOptions{AppKey: co.AppKey, Role: co.Role, RoleSecret: co.RoleSecret, Token: co.Token,
				MinBackoff: co.MinBackoff, MaxBackoff: co.MaxBackoff, DialTimeout: co.DialTimeout,
				DeliveryBufferBytes: co.DeliveryBufferBytes, Timeout: time.Duration(timeout), TokenFunc: co.TokenFunc != nil}
			got.Logs = consoleLines(t, co.Logger)
			if got != tt.want {
				t.Errorf("clientOptions(%s) = %+v, want %+v", tt.src, got, tt.want)
			}
		})
	}
}

func TestClientOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // in the error's text
	}{
		{name: "appkey not a string", src: "({appkey: 5})", want: "appkey must be a string"},
		{name: "secret not a string", src: `({role: "r", secret: {}})`, want: "secret must be a string"},
		{name: "token neither string nor function", src: "({token: 1})", want: "token must be a string"},
		{name: "negative backoff", src: "({minBackoff: -1})", want: "minBackoff must be a number >= 0"},
		{name: "backoff as a string", src: `({maxBackoff: "10"})`, want: "maxBackoff must be a number >= 0"},
		// Not here: an option given as a BigInt ({timeout: 5n}) reads as
		// unset today (options.get takes a value without a js.Type for
		// absent), where a string is refused.
		{name: "buffer negative", src: "({deliveryBufferBytes: -5})", want: "deliveryBufferBytes must be a number >= 0"},
		{name: "unknown log level", src: `({logLevel: "loud"})`, want: `logLevel "loud": want debug, info, warn, error or off`},
		{name: "role without secret", src: `({role: "r"})`, want: `the option role "r" needs the option secret`},
		{name: "secret without role", src: `({secret: "s"})`, want: "the option secret needs the option role"},
		{name: "role and token", src: `({role: "r", secret: "s", token: "t"})`, want: "set the option token or the option role, not both"},
		{name: "role and token function", src: `({role: "r", secret: "s", token: () => "t"})`, want: "not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := clientOptions(jsEval(t, tt.src))
			if !errors.Is(err, client.ErrOptions) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("clientOptions(%s) error = %v, want client.ErrOptions mentioning %q", tt.src, err, tt.want)
			}
		})
	}
}

// TestTokenFunction: a token function's string, or its Promise's, is the
// token; anything else is an error that says what went wrong.
func TestTokenFunction(t *testing.T) {
	tests := []struct {
		name    string
		src     string // the option token
		want    string
		wantErr string
	}{
		{name: "string", src: `() => "jwt-1"`, want: "jwt-1"},
		{name: "promise", src: `() => Promise.resolve("jwt-2")`, want: "jwt-2"},
		{name: "not a string", src: `() => 42`, wantErr: "the token function must return a string"},
		{name: "rejected", src: `() => Promise.reject(new Error("no session"))`, wantErr: "the token function failed: Error: no session"},
		{name: "throws", src: `() => { throw new Error("boom") }`, wantErr: "the token function threw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			co, _, err := clientOptions(jsEval(t, "({token: "+tt.src+"})"))
			if err != nil || co.TokenFunc == nil {
				t.Fatalf("clientOptions: %v, token function %v", err, co.TokenFunc != nil)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tok, err := co.TokenFunc(ctx)
			switch {
			case tt.wantErr == "" && (err != nil || tok != tt.want):
				t.Errorf("token = %q, %v; want %q", tok, err, tt.want)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("token = %q, %v; want an error mentioning %q", tok, err, tt.wantErr)
			}
		})
	}
}

func TestSubscribeOptions(t *testing.T) {
	pos := rtm.Position{Epoch: 1, Offset: 2}
	tests := []struct {
		name string
		src  string // subscribe's options
		want client.SubscribeOptions
	}{
		{name: "undefined", src: "undefined"},
		{name: "empty", src: "({})"},
		{name: "every option", src: `({id: "s1", position: "1:2", history: {count: 5, age: 1.5}, fastForward: true, strict: 1,
			force: "yes", filter: "SELECT * FROM chat", period: 0.25, onlyChanges: true, prefix: true, presence: true})`,
			want: client.SubscribeOptions{ID: "s1", Position: &pos, HistoryCount: 5, HistoryAge: 1500 * time.Millisecond,
				FastForward: true, Strict: true, Force: true, Filter: "SELECT * FROM chat", Period: 250 * time.Millisecond,
				OnlyChanges: true, Prefix: true, Presence: true}},
		{name: "falsy flags are off", src: `({fastForward: 0, strict: "", force: null, prefix: false})`},
		{name: "history count alone", src: "({history: {count: 3}})", want: client.SubscribeOptions{HistoryCount: 3}},
		{name: "null history", src: "({history: null})"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := subscribeOptions(jsEval(t, tt.src))
			if err != nil {
				t.Fatalf("subscribeOptions(%s): %v", tt.src, err)
			}
			// DeepEqual follows Position; the callbacks are nil in both.
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("subscribeOptions(%s) = %+v, want %+v", tt.src, *got, tt.want)
			}
		})
	}
}

func TestSubscribeOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{name: "bad position", src: `({position: "nope"})`, want: `position "nope"`},
		{name: "position not a string", src: "({position: 12})", want: "position must be a string"},
		{name: "id not a string", src: "({id: 3})", want: "id must be a string"},
		{name: "filter not a string", src: "({filter: []})", want: "filter must be a string"},
		{name: "negative count", src: "({history: {count: -1}})", want: "count must be a number >= 0"},
		{name: "age as a string", src: `({history: {age: "1h"}})`, want: "age must be a number >= 0"},
		{name: "period as a string", src: `({period: "1s"})`, want: "period must be a number >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := subscribeOptions(jsEval(t, tt.src))
			if !errors.Is(err, client.ErrOptions) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("subscribeOptions(%s) error = %v, want client.ErrOptions mentioning %q", tt.src, err, tt.want)
			}
		})
	}
}
