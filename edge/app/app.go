// Package app describes the apps an edge serves: each appkey is one app with
// its own channels, roles, permissions, retention rules and limits. Channels
// of two apps never mix, even with the same name.
package app

import (
	"time"

	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/store"
)

// DefaultRole is the role every connection starts with.
const DefaultRole = "default"

// DefaultMaxMessageBytes is the largest encoded message an app accepts
// unless configured otherwise.
const DefaultMaxMessageBytes = 64 << 10

// DefaultMaxChannels is how many live channels an app may have in an
// edge's store unless configured otherwise.
const DefaultMaxChannels = 100_000

// App is one appkey's configuration. It is immutable once the edge serves
// it.
type App struct {
	// Key is the appkey clients connect with.
	Key string
	// MaxMessageBytes bounds one encoded message; default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// MaxChannels bounds the app's live channels in the edge's store: a
	// publish that would create one more is refused (existing channels
	// keep working), so that one app's flood of channels cannot take the
	// store. 0 means DefaultMaxChannels; -1, no limit.
	MaxChannels int
	// JWTKeys verify tokens of the jwt auth extension; nil disables it.
	JWT *JWTKey
	// APIKeys authenticate the app's backends on the server HTTP API
	// (edge/api); several so that a key can be rotated without downtime.
	// Each is at least MinAPIKeyBytes long. None: the API refuses the app.
	APIKeys []string
	// Hooks are the app backend's URLs the edge asks (connect, subscribe,
	// publish) and posts events to; nil: none.
	Hooks *hook.Config
	// Roles by name; the "default" role applies before authentication.
	Roles map[string]*Role
	// Channels are retention rules, the first whose pattern matches wins;
	// a channel no rule matches gets the store's defaults.
	Channels []ChannelRule
	// Deflate negotiates permessage-deflate with the app's WebSocket
	// clients that offer it (browsers do); default off.
	Deflate bool
	// DeflateThreshold is the size of a WebSocket message (an encoded
	// PDU) below which it is sent uncompressed; 0 means
	// websocket.DefaultDeflateThreshold.
	DeflateThreshold int
}

// StoreKey names the app's channel in the store, which all apps share:
// appkeys never contain NUL, so no two apps' channels can collide.
func (a *App) StoreKey(channel string) string { return a.Key + "\x00" + channel }

// Role returns the role of that name, if the app has it.
func (a *App) Role(name string) (*Role, bool) {
	r, ok := a.Roles[name]
	return r, ok && r != nil
}

// DefaultPermissions returns the permissions of the default role, those of
// every connection before it authenticates; none if the app has no default
// role.
func (a *App) DefaultPermissions() Permissions {
	if r, ok := a.Role(DefaultRole); ok {
		return r.Permissions
	}
	return Permissions{}
}

// Retention returns the retention of a channel: that of the first channel
// rule whose pattern matches it (with the matching rules of MatchPattern,
// so "*" does not cover reserved channels), or the zero Retention, which
// means the store's defaults, when none does.
func (a *App) Retention(channel string) store.Retention {
	for i := range a.Channels {
		if MatchPattern(a.Channels[i].Pattern, channel) {
			return a.Channels[i].Retention
		}
	}
	return store.Retention{}
}

// MaxMessage returns the largest encoded message the app accepts:
// MaxMessageBytes, or DefaultMaxMessageBytes when it is not set.
func (a *App) MaxMessage() int {
	if a.MaxMessageBytes <= 0 {
		return DefaultMaxMessageBytes
	}
	return a.MaxMessageBytes
}

// ChannelLimit returns how many live channels the app may have:
// MaxChannels, DefaultMaxChannels when it is not set, or 0 (no limit)
// when it is negative.
func (a *App) ChannelLimit() int {
	switch {
	case a.MaxChannels == 0:
		return DefaultMaxChannels
	case a.MaxChannels < 0:
		return 0
	}
	return a.MaxChannels
}

// Role is a named set of permissions, optionally reachable by role_secret
// authentication.
type Role struct {
	Name string
	// Secret is the role_secret key; empty means the role cannot be taken
	// by role_secret authentication.
	Secret string
	Permissions
}

// Permissions grant publish (publish, write, delete), subscribe
// (subscribe, read) and presence (who is in the channel: rtm/presence and
// subscribe with presence) on channel patterns: exact names, or prefixes
// ending in '*' ("*" alone is every channel not starting with '$'; "$*"
// every reserved one).
type Permissions struct {
	Publish   []string
	Subscribe []string
	Presence  []string
}

// ChannelRule sets the retention of the channels matching Pattern.
type ChannelRule struct {
	Pattern   string
	Retention store.Retention
}

// JWTKey is an app's key for the jwt extension: an HMAC secret (HS256,
// HS384, HS512) or a public key (RSA, ECDSA or Ed25519, from a PEM file).
type JWTKey struct {
	// Secret is set for HMAC keys.
	Secret []byte
	// Public is set for asymmetric keys (*rsa.PublicKey, *ecdsa.PublicKey,
	// ed25519.PublicKey).
	Public any
	// Leeway tolerates clock skew when checking exp and nbf; default 0.
	Leeway time.Duration
	// MaxTokenTTL bounds the lifetime of the tokens the server API mints
	// with Secret (a public key cannot sign); 0 means DefaultMaxTokenTTL.
	MaxTokenTTL time.Duration
}

// DefaultMaxTokenTTL is the longest lifetime of a token the server API
// mints unless configured otherwise: a token cannot be revoked, so the
// longer it lives the longer a leaked one works.
const DefaultMaxTokenTTL = time.Hour

// TokenTTLLimit returns MaxTokenTTL, or DefaultMaxTokenTTL when it is not
// set.
func (k *JWTKey) TokenTTLLimit() time.Duration {
	if k.MaxTokenTTL <= 0 {
		return DefaultMaxTokenTTL
	}
	return k.MaxTokenTTL
}
