package edgecmd

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/store"
)

// Config is the edge's configuration file, in YAML. Every key is optional:
// a missing file or an empty one gives DefaultConfig, a working single node
// on 127.0.0.1:8080 serving the "demo" app. An unknown key is an error that
// names it and its line. Sizes are integers (bytes) or strings with a unit:
// B, KiB, MiB, GiB, TiB (powers of 2) or KB, MB, GB, TB (powers of 10), as
// in "64MiB". Durations use Go's syntax: "500ms", "10s", "6h". Channel
// patterns must be quoted in YAML when they start with '*' ("*", not *).
type Config struct {
	// Listen is the TCP address served, host:port. Default
	// "127.0.0.1:8080" (local only, plain HTTP), or ":443" when TLS is
	// configured; the --listen flag overrides it.
	Listen string `yaml:"listen,omitempty"`
	// Apps are the apps served, one per appkey. Default: the "demo" app,
	// whose default role may publish and subscribe every channel not
	// starting with '$', and subscribe "$sys.stats" (the edge's numbers,
	// for the demo dashboard). Listing apps replaces the demo app.
	Apps []AppConfig `yaml:"apps,omitempty"`
	// Limits bound what clients may use.
	Limits LimitsConfig `yaml:"limits,omitempty"`
	// AllowedOrigins are the Origin hosts browsers may open WebSockets from
	// (patterns as in "*.example.com"). Default ["*"]: any origin, which
	// suits RTM's own authentication (appkey and role); an app whose
	// connect hook trusts cookies needs its hosts listed, and an edge
	// serving TLS on a public address warns at start when it has not.
	// Clients that send no Origin (SDKs outside browsers) are always
	// allowed.
	AllowedOrigins []string `yaml:"allowed_origins,omitempty"`
	// Store tunes the in-memory channel store.
	Store StoreConfig `yaml:"store,omitempty"`
	// Log configures the logs written to standard error.
	Log LogConfig `yaml:"log,omitempty"`
	// TLS turns on HTTPS and WSS, with automatic certificates (see
	// TLSConfig, in config_tls.go). Default off.
	TLS TLSConfig `yaml:"tls,omitempty"`
	// Admin is the operators' listener: metrics and profiling. Default
	// off.
	Admin AdminConfig `yaml:"admin,omitempty"`
	// Cluster makes the edge durable (an embedded NATS JetStream) and one
	// of a cluster of edges (see ClusterConfig, in config_cluster.go).
	// Default off: channels live in memory only.
	Cluster ClusterConfig `yaml:"cluster,omitempty"`
	// NATS uses an external NATS cluster instead. Default off.
	NATS NATSConfig `yaml:"nats,omitempty"`
	// Web configures the browser files and demo pages (config_web.go).
	Web WebConfig `yaml:"web,omitempty"`

	// dir is the directory of the file loaded, against which relative
	// jwt_key_file paths resolve; "" for the working directory.
	dir string
}

// AppConfig is one app: its appkey, roles, retention rules and limits.
type AppConfig struct {
	// Appkey is what clients connect with (?appkey=...). Required: 1 to 128
	// letters, digits and - . _ ~.
	Appkey string `yaml:"appkey,omitempty"`
	// MaxMessageBytes bounds one encoded message; larger publishes are
	// refused with message_too_large. Default 64KiB.
	MaxMessageBytes Size `yaml:"max_message_bytes,omitempty"`
	// MaxChannels bounds the app's live channels in the edge's store (the
	// channels holding messages or subscribers; quiet ones are forgotten
	// once their messages expire): a publish that would create one more
	// is refused with channel_quota_exceeded and stores nothing, while
	// publishes to existing channels go on. In a cluster each edge counts
	// the channels its replica holds. Default 100000; -1: no limit.
	MaxChannels int `yaml:"max_channels,omitempty"`
	// Deflate negotiates permessage-deflate (RFC 7692, without context
	// takeover) with the app's WebSocket clients that offer it. Default
	// off (docs/configuration.md says why).
	Deflate bool `yaml:"deflate,omitempty"`
	// DeflateThreshold: WebSocket messages (encoded PDUs) smaller than
	// this are sent uncompressed. Default 256B.
	DeflateThreshold Size `yaml:"deflate_threshold,omitempty"`
	// JWTKey is an HMAC secret (HS256, HS384, HS512) of at least 32 bytes
	// enabling the jwt auth extension. Default none: jwt is refused with
	// auth_method_not_allowed. Exclusive with JWTKeyFile.
	JWTKey string `yaml:"jwt_key,omitempty"`
	// JWTKeyFile is a PEM file holding the RSA (2048 bits or more), ECDSA
	// (P-256, P-384, P-521) or Ed25519 public key (or certificate) that
	// verifies jwt tokens; a relative path is relative to this config file.
	// Default none.
	JWTKeyFile string `yaml:"jwt_key_file,omitempty"`
	// JWTLeeway tolerates clock skew when checking a token's exp and nbf.
	// Default 0.
	JWTLeeway Duration `yaml:"jwt_leeway,omitempty"`
	// TokenMaxTTL bounds the lifetime of the tokens the server API's
	// token method mints with jwt_key. Default 1h.
	TokenMaxTTL Duration `yaml:"token_max_ttl,omitempty"`
	// APIKeys authenticate the app's backends on the server HTTP API
	// (POST /api/<method>): each key names this app, so no two apps may
	// share one. Several may be listed, to rotate a key without downtime.
	// Each at least 16 bytes (use random ones: openssl rand -hex 16).
	// Default none: the API refuses this app.
	APIKeys []string `yaml:"api_keys,omitempty"`
	// Hooks are the app backend's URLs the edge asks and posts events to
	// (see HooksConfig, in config_hooks.go). Default none.
	Hooks HooksConfig `yaml:"hooks,omitempty"`
	// Roles by name. Every connection starts with the "default" role; when
	// it is not listed, the default role has no permissions and clients
	// must authenticate before they can do anything.
	Roles map[string]RoleConfig `yaml:"roles,omitempty"`
	// Channels are retention rules; the first whose pattern matches a
	// channel applies, and a channel no rule matches gets the defaults
	// (ttl 60s, grace 10s, history 1 message for 6h). "*" does not match
	// channels starting with '$'; "$*" does.
	Channels []ChannelConfig `yaml:"channels,omitempty"`
}

// RoleConfig is a role's permissions and, optionally, its secret.
type RoleConfig struct {
	// Secret lets clients take the role by role_secret authentication.
	// Default none: the role is reachable only through jwt tokens naming
	// it (or, for "default", by everyone).
	Secret string `yaml:"secret,omitempty"`
	// Publish lists the channel patterns the role may publish, write and
	// delete on: exact names, or prefixes ending in '*'. Default none.
	Publish []string `yaml:"publish,omitempty"`
	// Subscribe lists the channel patterns the role may subscribe to and
	// read. Default none.
	Subscribe []string `yaml:"subscribe,omitempty"`
	// Presence lists the channel patterns whose members the role may see:
	// rtm/presence, and subscribe with presence: true (which needs
	// subscribe too). Default none.
	Presence []string `yaml:"presence,omitempty"`
}

// ChannelConfig is the retention of the channels matching Pattern. A key
// left out takes its default; an explicit 0 means none (no grace, no
// history).
type ChannelConfig struct {
	// Pattern selects channels: an exact name or a prefix ending in '*'.
	// Required.
	Pattern string `yaml:"pattern,omitempty"`
	// TTL is how long every message is kept at least; positive. Default
	// 60s.
	TTL *Duration `yaml:"ttl,omitempty"`
	// Grace is how long subscribers already reading expired messages may
	// go on reading them before they are out of sync. Default 10s.
	Grace *Duration `yaml:"grace,omitempty"`
	// History keeps the newest messages past TTL.
	History HistoryConfig `yaml:"history,omitempty"`
}

// HistoryConfig keeps the newest Count messages of a channel for up to Age,
// even past its TTL (the latest value stays readable: key-value use).
type HistoryConfig struct {
	// Count is how many messages. Default 1.
	Count *int `yaml:"count,omitempty"`
	// Age is for how long. Default 6h.
	Age *Duration `yaml:"age,omitempty"`
}

// retention returns the store's retention for the rule: 0 for "default",
// negative for an explicit "none".
func (ch *ChannelConfig) retention() (store.Retention, error) {
	var r store.Retention
	if ch.TTL != nil {
		if *ch.TTL == 0 {
			return r, errors.New("ttl: must be positive")
		}
		r.TTL = time.Duration(*ch.TTL)
	}
	r.Grace = orNone(ch.Grace)
	r.HistoryAge = orNone(ch.History.Age)
	if c := ch.History.Count; c != nil {
		switch {
		case *c < 0:
			return r, fmt.Errorf("history.count: %d is negative", *c)
		case *c == 0:
			r.HistoryCount = -1
		default:
			r.HistoryCount = *c
		}
	}
	return r, nil
}

// orNone maps an unset duration to 0 (the store's default) and an explicit
// 0 to -1 (none).
func orNone(d *Duration) time.Duration {
	switch {
	case d == nil:
		return 0
	case *d == 0:
		return -1
	}
	return time.Duration(*d)
}

// DefaultConfig returns the embedded configuration: listen on
// 127.0.0.1:8080 (ListenAddr), serve the demo app (see app.Demo) with the
// development API key (DemoAPIKey), every limit at its default, info
// logs as text.
func DefaultConfig() *Config {
	demo := appConfigOf(app.Demo())
	demo.APIKeys = []string{DemoAPIKey}
	return &Config{
		Apps: []AppConfig{demo},
		Log:  LogConfig{Level: "info", Format: "text"},
	}
}

// appConfigOf returns the configuration of a, so that the demo app is
// defined once, by app.Demo. It carries the appkey, the message limit and
// the roles: the demo app has no jwt key and no channel rules, and
// TestDefaultConfig checks that the app built back from it is app.Demo().
func appConfigOf(a *app.App) AppConfig {
	ac := AppConfig{
		Appkey:          a.Key,
		MaxMessageBytes: Size(a.MaxMessageBytes),
		MaxChannels:     a.MaxChannels,
		Roles:           make(map[string]RoleConfig, len(a.Roles)),
	}
	for name, r := range a.Roles {
		ac.Roles[name] = RoleConfig{Secret: r.Secret, Publish: r.Publish, Subscribe: r.Subscribe, Presence: r.Presence}
	}
	return ac
}

// Validate checks the whole configuration, including that jwt_key_file
// files hold usable keys. Errors name the field by its path, as in
// "apps[0].roles.admin.publish[1]: ...".
func (c *Config) Validate() error {
	if _, err := c.build(); err != nil {
		return err
	}
	return c.validateCluster()
}

// ServerOptions validates the configuration and returns the edge's options:
// the apps, the store's options and the limits. Logger is left nil for the
// caller to set.
func (c *Config) ServerOptions() (*server.Options, error) {
	apps, err := c.build()
	if err != nil {
		return nil, err
	}
	if err := c.validateCluster(); err != nil {
		return nil, err
	}
	l := c.Limits
	return &server.Options{
		Apps: apps,
		StoreOptions: &store.Options{
			BlockBytes:      int(c.Store.BlockBytes),
			FirstBlockBytes: int(c.Store.FirstBlockBytes),
			ChannelBytes:    int64(l.ChannelBytes),
			StoreBytes:      c.storeBytes(),
			SweepInterval:   time.Duration(c.Store.SweepInterval),
		},
		Limits: server.Limits{
			Connections:                cmp.Or(l.Connections, defaultConnections(openFilesLimit())),
			SubscriptionsPerConnection: l.SubscriptionsPerConnection,
			PrefixChannels:             l.PrefixChannels,
			RequestsPerSecond:          l.RequestsPerSecond,
			RequestBurst:               l.RequestBurst,
			AuthFailures:               l.AuthFailuresPerConnection,
			AuthFailuresPerMinute:      l.AuthFailuresPerMinute,
			QueueBytes:                 int(l.QueueBytes),
			WriteTimeout:               time.Duration(l.WriteTimeout),
			FrameTimeout:               time.Duration(l.FrameTimeout),
			PingInterval:               time.Duration(l.PingInterval),
			ShutdownTimeout:            time.Duration(l.ShutdownTimeout),
			DrainSpread:                l.drainSpread(),
		},
		AllowedOrigins: slices.Clone(c.AllowedOrigins),
	}, nil
}

// build checks everything and returns the apps.
func (c *Config) build() ([]*app.App, error) {
	if _, _, err := net.SplitHostPort(c.ListenAddr()); err != nil {
		return nil, fmt.Errorf("listen: %q is not host:port", c.ListenAddr())
	}
	if err := c.checkScalars(); err != nil {
		return nil, err
	}
	if len(c.Apps) == 0 {
		return nil, errors.New("apps: at least one app is required")
	}
	apps := make([]*app.App, len(c.Apps))
	seen := make(map[string]int, len(c.Apps))
	for i := range c.Apps {
		a, err := c.Apps[i].build(c.dir)
		if err != nil {
			return nil, fmt.Errorf("apps[%d].%w", i, err)
		}
		if j, dup := seen[a.Key]; dup {
			return nil, fmt.Errorf("apps[%d].appkey: %q is also apps[%d]'s", i, a.Key, j)
		}
		seen[a.Key] = i
		apps[i] = a
	}
	if err := uniqueAPIKeys(apps); err != nil {
		return nil, err
	}
	return apps, nil
}

// uniqueAPIKeys refuses an API key listed by two apps: a key names its
// app. The error names the keys by index, never quotes them.
func uniqueAPIKeys(apps []*app.App) error {
	owner := make(map[string][2]int)
	for i, a := range apps {
		for k, key := range a.APIKeys {
			if prev, dup := owner[key]; dup && prev[0] != i {
				return fmt.Errorf("apps[%d].api_keys[%d]: the same key is apps[%d].api_keys[%d]: a key names one app", i, k, prev[0], prev[1])
			}
			owner[key] = [2]int{i, k}
		}
	}
	return nil
}

// checkScalars checks the limits, origins, store and log settings.
func (c *Config) checkScalars() error {
	l := c.Limits
	counts := []int{l.Connections, l.SubscriptionsPerConnection, l.RequestsPerSecond, l.RequestBurst,
		l.AuthFailuresPerConnection, l.AuthFailuresPerMinute, l.APIRequestsPerSecond, l.APIRequestBurst, l.PrefixChannels}
	for i, name := range []string{"connections", "subscriptions_per_connection", "requests_per_second", "request_burst",
		"auth_failures_per_connection", "auth_failures_per_minute", "api_requests_per_second", "api_request_burst", "prefix_channels"} {
		if counts[i] < 0 {
			return fmt.Errorf("limits.%s: %d is negative", name, counts[i])
		}
	}
	if err := l.checkDrain(); err != nil {
		return err
	}
	if l.ConnectionsPerIP < -1 {
		return fmt.Errorf("limits.connections_per_ip: %d is neither a count nor -1 (no limit)", l.ConnectionsPerIP)
	}
	if l.IdleTimeout < 0 {
		return fmt.Errorf("limits.idle_timeout: %s is negative", time.Duration(l.IdleTimeout))
	}
	if l.FrameTimeout < 0 {
		return fmt.Errorf("limits.frame_timeout: %s is negative", time.Duration(l.FrameTimeout))
	}
	if err := fitsInt(l.QueueBytes); err != nil {
		return fmt.Errorf("limits.queue_bytes: %w", err)
	}
	if err := fitsInt(c.Store.BlockBytes); err != nil {
		return fmt.Errorf("store.block_bytes: %w", err)
	}
	if err := fitsInt(c.Store.FirstBlockBytes); err != nil {
		return fmt.Errorf("store.first_block_bytes: %w", err)
	}
	for i, o := range c.AllowedOrigins {
		if strings.TrimSpace(o) == "" {
			return fmt.Errorf("allowed_origins[%d]: empty origin", i)
		}
	}
	if _, err := logLevel(c.Log.Level); err != nil {
		return fmt.Errorf("log.level: %q is not debug, info, warn or error", c.Log.Level)
	}
	if f := c.Log.Format; f != "" && f != "text" && f != "json" {
		return fmt.Errorf("log.format: %q is not text or json", f)
	}
	if err := c.TLS.check(); err != nil {
		return err
	}
	return c.Admin.check()
}

// fitsInt checks that a size fits an int on this platform.
func fitsInt(s Size) error {
	if int64(s) > math.MaxInt {
		return fmt.Errorf("%d bytes is too large", s)
	}
	return nil
}

// build returns the app; errors start with the field path inside the app,
// for the caller to prefix with "apps[i].".
func (ac *AppConfig) build(dir string) (*app.App, error) {
	a := &app.App{
		Key:             ac.Appkey,
		MaxMessageBytes: int(ac.MaxMessageBytes),
		MaxChannels:     ac.MaxChannels,
		Roles:           make(map[string]*app.Role, len(ac.Roles)+1),
	}
	if err := fitsInt(ac.MaxMessageBytes); err != nil {
		return nil, fmt.Errorf("max_message_bytes: %w", err)
	}
	if ac.DeflateThreshold < 0 {
		return nil, fmt.Errorf("deflate_threshold: %d is negative", ac.DeflateThreshold)
	}
	if err := fitsInt(ac.DeflateThreshold); err != nil {
		return nil, fmt.Errorf("deflate_threshold: %w", err)
	}
	a.Deflate, a.DeflateThreshold = ac.Deflate, int(ac.DeflateThreshold)
	if a.MaxMessageBytes == 0 {
		a.MaxMessageBytes = app.DefaultMaxMessageBytes
	}
	if a.MaxChannels == 0 {
		a.MaxChannels = app.DefaultMaxChannels
	}
	key, err := ac.jwtKey(dir)
	if err != nil {
		return nil, err
	}
	a.JWT = key
	a.APIKeys = slices.Clone(ac.APIKeys)
	a.Hooks = ac.Hooks.build()
	for name, rc := range ac.Roles {
		a.Roles[name] = &app.Role{Name: name, Secret: rc.Secret, Permissions: app.Permissions{
			Publish: slices.Clone(rc.Publish), Subscribe: slices.Clone(rc.Subscribe), Presence: slices.Clone(rc.Presence),
		}}
	}
	if _, ok := a.Roles[app.DefaultRole]; !ok {
		a.Roles[app.DefaultRole] = &app.Role{Name: app.DefaultRole}
	}
	for i := range ac.Channels {
		r, err := ac.Channels[i].retention()
		if err != nil {
			return nil, fmt.Errorf("channels[%d].%w", i, err)
		}
		a.Channels = append(a.Channels, app.ChannelRule{Pattern: ac.Channels[i].Pattern, Retention: r})
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// jwtKey returns the app's jwt key, nil when it has none.
func (ac *AppConfig) jwtKey(dir string) (*app.JWTKey, error) {
	switch {
	case ac.JWTKey != "" && ac.JWTKeyFile != "":
		return nil, errors.New("jwt_key: set jwt_key or jwt_key_file, not both")
	case ac.TokenMaxTTL != 0 && ac.JWTKey == "":
		return nil, errors.New("token_max_ttl: the server API mints tokens with jwt_key, which is not set")
	case ac.JWTKey != "":
		k := &app.JWTKey{Secret: []byte(ac.JWTKey), Leeway: time.Duration(ac.JWTLeeway), MaxTokenTTL: time.Duration(ac.TokenMaxTTL)}
		if err := k.Validate(); err != nil {
			return nil, fmt.Errorf("jwt_key: %w", err)
		}
		return k, nil
	case ac.JWTKeyFile != "":
		path := ac.JWTKeyFile
		if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("jwt_key_file: %w", err)
		}
		pub, err := auth.ParsePublicKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("jwt_key_file: %s: %w", path, err)
		}
		return &app.JWTKey{Public: pub, Leeway: time.Duration(ac.JWTLeeway)}, nil
	}
	return nil, nil
}
