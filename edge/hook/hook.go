// Package hook connects an edge to its apps' own backends over HTTP: the
// edge asks the backend (hooks) and tells it (events).
//
// Hooks are synchronous questions the edge asks before it acts, each a
// POST of JSON to a URL of the app's, signed (see Sign), answered with
// JSON within Config.Timeout:
//
//   - connect, before a WebSocket upgrade: with the client's token (the
//     ?token= query parameter), its cookies and headers; the answer allows
//     or denies the connection and may name its user, its role or its
//     permissions, and info about the user;
//   - subscribe, before an rtm/subscribe the connection's permissions
//     allow: allow or deny;
//   - publish, before an rtm/publish the permissions allow: allow, deny,
//     or allow with a replacement message.
//
// A hook that times out, fails or answers something that is not an answer
// is a failure, which Config.OnFailure turns into a denial (the default)
// or an allowance. A Caller never waits longer than Config.Timeout, so a
// slow backend holds a connection's requests for at most that long.
//
// Events are what the edge tells a backend afterwards (channel_occupied,
// channel_vacated, disconnect, presence_join, presence_leave): Events.Post
// queues one without blocking; a goroutine per app posts them in batches
// to Config.Events.URL, signed, and retries a batch with exponential
// backoff until the backend answers 2xx: at least once, in order, each
// with an id a backend can deduplicate by. The queue is bounded: when it
// is full an event is dropped and counted (Stats), never waited for.
package hook

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
)

// Defaults of Config.
const (
	DefaultTimeout     = 2 * time.Second
	DefaultBatch       = 100
	DefaultFlush       = 100 * time.Millisecond
	DefaultQueue       = 10_000
	DefaultMinBackoff  = 100 * time.Millisecond
	DefaultMaxBackoff  = 30 * time.Second
	MaxTimeout         = 30 * time.Second
	MinSecretBytes     = 16
	MaxAnswerBytes     = 1 << 20
	defaultMaxIdleConn = 64
)

// Failure is what a failed hook (timeout, transport error, non-2xx status,
// an answer that does not decode) means.
type Failure string

// The values of Config.OnFailure.
const (
	// FailDeny refuses what the hook was asked about: the default, since a
	// backend that cannot answer cannot have allowed it.
	FailDeny Failure = "deny"
	// FailAllow goes on as if no hook were configured: the connection
	// keeps the app's default role, the subscribe or publish proceeds
	// with its own message.
	FailAllow Failure = "allow"
)

// Config is one app's hooks and events. A nil *Config, and an empty URL,
// means no hook of that kind.
type Config struct {
	// Connect, Subscribe and Publish are the URLs of the hooks; empty:
	// that hook is not called.
	Connect   string
	Subscribe string
	Publish   string
	// Secret signs every request the edge makes (hooks and events) with
	// HMAC-SHA256, so the backend can tell them from forgeries; at least
	// MinSecretBytes. Required when any URL is set.
	Secret string
	// Timeout bounds each hook call, connecting included; default
	// DefaultTimeout (2s), at most MaxTimeout.
	Timeout time.Duration
	// OnFailure is what a failed hook means; default FailDeny.
	OnFailure Failure
	// Events configures the events the edge posts.
	Events EventsConfig
}

// EventsConfig is where and how events are posted.
type EventsConfig struct {
	// URL receives batches of events; empty: none are posted.
	URL string
	// Kinds are the kinds posted; default all of Kinds.
	Kinds []string
	// Batch is the most events in one post; default DefaultBatch (100).
	Batch int
	// Flush is how long an event may wait for others to share its post;
	// default DefaultFlush (100ms); negative: post at once.
	Flush time.Duration
	// Queue bounds the events waiting to be posted (while a post is
	// retried they pile up); past it new events are dropped and counted.
	// Default DefaultQueue (10,000).
	Queue int
	// MinBackoff and MaxBackoff bound the wait between two attempts of a
	// batch, doubled from MinBackoff after each failure up to MaxBackoff,
	// with jitter; defaults 100ms and 30s.
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

// ErrNoSecret and the other errors of Validate.
var (
	ErrNoSecret  = errors.New("hook: a secret of at least 16 bytes is required to sign the requests")
	ErrBadURL    = errors.New("hook: not an absolute http or https URL")
	ErrBadKind   = errors.New("hook: unknown event kind")
	ErrNegative  = errors.New("hook: must not be negative")
	ErrTimeout   = errors.New("hook: timeout must be at most 30s")
	ErrOnFailure = errors.New(`hook: on_failure must be "deny" or "allow"`)
)

// Validate checks the configuration; errors start with the field's name
// in the config file. It never quotes the secret.
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	for _, u := range []struct{ name, url string }{
		{"connect", c.Connect}, {"subscribe", c.Subscribe}, {"publish", c.Publish}, {"events.url", c.Events.URL},
	} {
		if u.url == "" {
			continue
		}
		if err := checkURL(u.url); err != nil {
			return fmt.Errorf("%s: %w", u.name, err)
		}
	}
	if c.any() && len(c.Secret) < MinSecretBytes {
		return fmt.Errorf("secret: %w", ErrNoSecret)
	}
	switch {
	case c.Timeout < 0:
		return fmt.Errorf("timeout: %w", ErrNegative)
	case c.Timeout > MaxTimeout:
		return fmt.Errorf("timeout: %w", ErrTimeout)
	}
	if c.OnFailure != "" && c.OnFailure != FailDeny && c.OnFailure != FailAllow {
		return fmt.Errorf("on_failure: %w", ErrOnFailure)
	}
	e := c.Events
	for i, k := range e.Kinds {
		if !slices.Contains(Kinds, k) {
			return fmt.Errorf("events.kinds[%d]: %w %q (the kinds are %v)", i, ErrBadKind, k, Kinds)
		}
	}
	for _, n := range []struct {
		name string
		v    int64
	}{{"events.batch", int64(e.Batch)}, {"events.queue", int64(e.Queue)},
		{"events.min_backoff", int64(e.MinBackoff)}, {"events.max_backoff", int64(e.MaxBackoff)}} {
		if n.v < 0 {
			return fmt.Errorf("%s: %w", n.name, ErrNegative)
		}
	}
	return nil
}

// any reports whether some URL is set.
func (c *Config) any() bool {
	return c.Connect != "" || c.Subscribe != "" || c.Publish != "" || c.Events.URL != ""
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ErrBadURL
	}
	return nil
}

// timeout returns Timeout or its default.
func (c *Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// withDefaults returns the events configuration with every default filled.
func (e EventsConfig) withDefaults() EventsConfig {
	if e.Batch <= 0 {
		e.Batch = DefaultBatch
	}
	if e.Flush == 0 {
		e.Flush = DefaultFlush
	}
	if e.Queue <= 0 {
		e.Queue = DefaultQueue
	}
	if e.MinBackoff <= 0 {
		e.MinBackoff = DefaultMinBackoff
	}
	if e.MaxBackoff <= 0 {
		e.MaxBackoff = DefaultMaxBackoff
	}
	e.MaxBackoff = max(e.MaxBackoff, e.MinBackoff)
	if len(e.Kinds) == 0 {
		e.Kinds = Kinds
	}
	return e
}
