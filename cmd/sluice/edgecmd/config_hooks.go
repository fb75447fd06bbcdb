package edgecmd

import (
	"slices"
	"time"

	"github.com/sluicehq/sluice/edge/hook"
)

// HooksConfig is an app's hooks: URLs of its backend the edge asks before
// it lets a client connect, subscribe or publish, and the URL it posts
// events to (edge/hook). Every key is optional; without URLs there are
// no hooks. Every request is a POST of JSON signed with secret (header
// Sluice-Signature: t=UNIX,v1=HEX of HMAC-SHA256(secret, "t.body")).
type HooksConfig struct {
	// Connect is asked before a WebSocket upgrade, with the client's
	// ?token=, cookies and headers; it answers {"allow", "reason",
	// "user", "role" or "permissions", "info"}. Default none.
	Connect string `yaml:"connect,omitempty"`
	// Subscribe is asked about each rtm/subscribe the connection's role
	// allows; it answers {"allow", "reason"}. Default none.
	Subscribe string `yaml:"subscribe,omitempty"`
	// Publish is asked about each rtm/publish and rtm/write the role
	// allows; it answers {"allow", "reason", "message"} (message, when
	// given, is published instead). Default none.
	Publish string `yaml:"publish,omitempty"`
	// Secret signs every request; at least 16 bytes, required with any
	// URL (openssl rand -hex 32).
	Secret string `yaml:"secret,omitempty"`
	// Timeout bounds each hook call; at most 30s. Default 2s.
	Timeout Duration `yaml:"timeout,omitempty"`
	// OnFailure is what a hook that times out, fails or answers garbage
	// means: "deny" (the default) or "allow" (as if there were no hook).
	OnFailure string `yaml:"on_failure,omitempty"`
	// Events are posted in batches, at least once.
	Events EventsHookConfig `yaml:"events,omitempty"`
}

// EventsHookConfig is where and how an app's events are posted.
type EventsHookConfig struct {
	// URL receives {"events": [...]}; default none.
	URL string `yaml:"url,omitempty"`
	// Kinds are the events posted: channel_occupied, channel_vacated,
	// disconnect, presence_join, presence_leave. Default all.
	Kinds []string `yaml:"kinds,omitempty"`
	// Batch is the most events in one post. Default 100.
	Batch int `yaml:"batch,omitempty"`
	// Flush is how long an event may wait for others to share its post.
	// Default 100ms.
	Flush Duration `yaml:"flush,omitempty"`
	// Queue bounds the events waiting (while the backend is down); past
	// it new ones are dropped and counted
	// (sluice_hook_events_dropped_total). Default 10000.
	Queue int `yaml:"queue,omitempty"`
	// MinBackoff and MaxBackoff bound the wait before a failed post is
	// retried, doubling from the one to the other. Defaults 100ms, 30s.
	MinBackoff Duration `yaml:"min_backoff,omitempty"`
	MaxBackoff Duration `yaml:"max_backoff,omitempty"`
}

// build returns the hooks' configuration, nil when no URL is set; app
// validation checks it (errors name hooks.FIELD).
func (hc *HooksConfig) build() *hook.Config {
	if hc.Connect == "" && hc.Subscribe == "" && hc.Publish == "" && hc.Events.URL == "" &&
		hc.Secret == "" && hc.Timeout == 0 && hc.OnFailure == "" {
		return nil
	}
	return &hook.Config{
		Connect: hc.Connect, Subscribe: hc.Subscribe, Publish: hc.Publish,
		Secret: hc.Secret, Timeout: time.Duration(hc.Timeout), OnFailure: hook.Failure(hc.OnFailure),
		Events: hook.EventsConfig{
			URL: hc.Events.URL, Kinds: slices.Clone(hc.Events.Kinds), Batch: hc.Events.Batch,
			Flush: time.Duration(hc.Events.Flush), Queue: hc.Events.Queue,
			MinBackoff: time.Duration(hc.Events.MinBackoff), MaxBackoff: time.Duration(hc.Events.MaxBackoff),
		},
	}
}
