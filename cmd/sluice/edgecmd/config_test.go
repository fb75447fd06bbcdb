package edgecmd

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fullConfig sets every key of the configuration file.
const fullConfig = `# every key of the configuration
listen: 0.0.0.0:9000
apps:
  - appkey: chat-app
    max_message_bytes: 32KiB
    deflate: true
    deflate_threshold: 1KiB
    jwt_key: "0123456789abcdef0123456789abcdef"
    jwt_leeway: 5s
    api_keys: ["backend-key-0123456789", "rotated-key-0123456789"]
    roles:
      default: {publish: ["lobby"], subscribe: ["*"]}
      admin:   {secret: "s3cret", publish: ["*", "$*"], subscribe: ["*", "$*"]}
    channels:
      - pattern: "chat.*"
        ttl: 2m
        grace: 10s
        history: {count: 20, age: 1h}
      - pattern: "*"
        ttl: 60s
      - pattern: "$*"
        grace: 0s
        history: {count: 0}
  - appkey: sensors
    jwt_key_file: jwt.pem
    roles:
      writer: {publish: ["sensor.*"]}
limits:
  connections: 5000
  subscriptions_per_connection: 64
  requests_per_second: 200
  request_burst: 500
  queue_bytes: 2MiB
  store_bytes: 4GiB
  channel_bytes: 64MB
  write_timeout: 5s
  ping_interval: 20s
  shutdown_timeout: 3s
allowed_origins: ["https://example.com", "*.example.org"]
store: {block_bytes: 65536, first_block_bytes: 4KiB, sweep_interval: 500ms}
log: {level: debug, format: json}
`

// dur returns a pointer to a configured duration.
func dur(d time.Duration) *Duration { v := Duration(d); return &v }

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// writeConfig writes a config file (and an Ed25519 public key as jwt.pem
// beside it) and returns its path and the private key.
func writeConfig(t *testing.T, text string) (string, ed25519.PrivateKey) {
	t.Helper()
	dir := t.TempDir()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "jwt.pem"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, priv
}

func TestLoadFullConfig(t *testing.T) {
	t.Parallel()
	path, priv := writeConfig(t, fullConfig)
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	want := &Config{
		Listen: "0.0.0.0:9000",
		Apps: []AppConfig{{
			Appkey:           "chat-app",
			MaxMessageBytes:  32 << 10,
			Deflate:          true,
			DeflateThreshold: 1 << 10,
			JWTKey:           "0123456789abcdef0123456789abcdef",
			JWTLeeway:        Duration(5 * time.Second),
			APIKeys:          []string{"backend-key-0123456789", "rotated-key-0123456789"},
			Roles: map[string]RoleConfig{
				"default": {Publish: []string{"lobby"}, Subscribe: []string{"*"}},
				"admin":   {Secret: "s3cret", Publish: []string{"*", "$*"}, Subscribe: []string{"*", "$*"}},
			},
			Channels: []ChannelConfig{
				{Pattern: "chat.*", TTL: dur(2 * time.Minute), Grace: dur(10 * time.Second), History: HistoryConfig{Count: ptr(20), Age: dur(time.Hour)}},
				{Pattern: "*", TTL: dur(time.Minute)},
				{Pattern: "$*", Grace: dur(0), History: HistoryConfig{Count: ptr(0)}},
			},
		}, {
			Appkey:     "sensors",
			JWTKeyFile: "jwt.pem",
			Roles:      map[string]RoleConfig{"writer": {Publish: []string{"sensor.*"}}},
		}},
		Limits: LimitsConfig{
			Connections: 5000, SubscriptionsPerConnection: 64, RequestsPerSecond: 200, RequestBurst: 500,
			QueueBytes: 2 << 20, StoreBytes: 4 << 30, ChannelBytes: 64e6,
			WriteTimeout: Duration(5 * time.Second), PingInterval: Duration(20 * time.Second),
			ShutdownTimeout: Duration(3 * time.Second),
		},
		AllowedOrigins: []string{"https://example.com", "*.example.org"},
		Store:          StoreConfig{BlockBytes: 65536, FirstBlockBytes: 4096, SweepInterval: Duration(500 * time.Millisecond)},
		Log:            LogConfig{Level: "debug", Format: "json"},
		dir:            filepath.Dir(path),
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("LoadConfig =\n%+v\nwant\n%+v", c, want)
	}

	// Written back out and loaded again, it is the same configuration.
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := LoadConfig(path)
	if err != nil {
		t.Fatalf("reloading the marshalled config: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(again, want) {
		t.Fatalf("round trip =\n%+v\nwant\n%+v\nfrom\n%s", again, want, out)
	}
	checkFullOptions(t, c, priv)
}

// checkFullOptions checks the server options built from fullConfig.
func checkFullOptions(t *testing.T, c *Config, priv ed25519.PrivateKey) {
	t.Helper()
	opts, err := c.ServerOptions()
	if err != nil {
		t.Fatalf("ServerOptions: %v", err)
	}
	l := opts.Limits
	if l.Connections != 5000 || l.SubscriptionsPerConnection != 64 || l.RequestsPerSecond != 200 ||
		l.RequestBurst != 500 || l.QueueBytes != 2<<20 || l.WriteTimeout != 5*time.Second || l.PingInterval != 20*time.Second ||
		l.ShutdownTimeout != 3*time.Second {
		t.Errorf("limits = %+v", l)
	}
	so := opts.StoreOptions
	if so.BlockBytes != 65536 || so.FirstBlockBytes != 4096 || so.StoreBytes != 4<<30 || so.ChannelBytes != 64e6 || so.SweepInterval != 500*time.Millisecond {
		t.Errorf("store options = %+v", so)
	}
	if !reflect.DeepEqual(opts.AllowedOrigins, []string{"https://example.com", "*.example.org"}) {
		t.Errorf("origins = %v", opts.AllowedOrigins)
	}
	if len(opts.Apps) != 2 {
		t.Fatalf("%d apps", len(opts.Apps))
	}
	chat, sensors := opts.Apps[0], opts.Apps[1]
	if chat.Key != "chat-app" || chat.MaxMessage() != 32<<10 {
		t.Errorf("chat app = %+v", chat)
	}
	if !slices.Equal(chat.APIKeys, []string{"backend-key-0123456789", "rotated-key-0123456789"}) || len(sensors.APIKeys) != 0 {
		t.Errorf("api keys = %q and %q", chat.APIKeys, sensors.APIKeys)
	}
	wantRet := store.Retention{TTL: 2 * time.Minute, Grace: 10 * time.Second, HistoryCount: 20, HistoryAge: time.Hour}
	if got := chat.Retention("chat.room"); got != wantRet {
		t.Errorf("chat.room retention = %+v, want %+v", got, wantRet)
	}
	if got := chat.Retention("news"); got != (store.Retention{TTL: time.Minute}) {
		t.Errorf("news retention = %+v", got)
	}
	// An explicit 0 is "none" to the store; a key left out its default.
	if got := chat.Retention("$sys"); got != (store.Retention{Grace: -1, HistoryCount: -1}) {
		t.Errorf("$sys retention = %+v", got)
	}
	if p := chat.DefaultPermissions(); !p.CanPublish("lobby") || p.CanPublish("chat.x") || !p.CanSubscribe("chat.x") {
		t.Errorf("default permissions = %+v", p)
	}
	if admin, ok := chat.Role("admin"); !ok || admin.Secret != "s3cret" || !admin.CanPublish("$sys") {
		t.Errorf("admin role = %+v", admin)
	}
	// The jwt keys work: the HMAC secret, and the PEM file beside the config.
	now := time.Now()
	for _, tc := range []struct {
		a   *app.App
		key any
	}{{chat, []byte("0123456789abcdef0123456789abcdef")}, {sensors, priv}} {
		tok, err := auth.Mint(tc.key, auth.Claims{Role: "default", Expires: now.Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := auth.Verify(tc.a, tok, now); err != nil {
			t.Errorf("app %s: Verify: %v", tc.a.Key, err)
		}
	}
	if p := sensors.DefaultPermissions(); p.CanSubscribe("sensor.1") || p.CanPublish("sensor.1") {
		t.Errorf("an unlisted default role grants %+v", p)
	}
	if chat.JWT.Leeway != 5*time.Second {
		t.Errorf("leeway = %v", chat.JWT.Leeway)
	}
}

func TestLoadEmptyFile(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "# nothing but a comment\n", "---\n"} {
		path, _ := writeConfig(t, text)
		c, err := LoadConfig(path)
		if err != nil {
			t.Fatalf("LoadConfig(%q): %v", text, err)
		}
		c.dir = ""
		if !reflect.DeepEqual(c, DefaultConfig()) {
			t.Fatalf("LoadConfig(%q) = %+v, want the defaults", text, c)
		}
	}
}

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	if c.ListenAddr() != "127.0.0.1:8080" {
		t.Fatalf("listen = %q", c.ListenAddr())
	}
	opts, err := c.ServerOptions()
	if err != nil {
		t.Fatalf("ServerOptions: %v", err)
	}
	demoApp := app.Demo()
	demoApp.APIKeys = []string{DemoAPIKey} // the development key, which the banner prints
	if len(opts.Apps) != 1 || !reflect.DeepEqual(opts.Apps[0], demoApp) {
		t.Fatalf("apps = %+v, want exactly app.Demo() with the development API key", opts.Apps)
	}
	demo := opts.Apps[0]
	if p := demo.DefaultPermissions(); !p.CanPublish("chat") || !p.CanSubscribe("chat") || !p.CanSubscribe("$sys.stats") || p.CanPublish("$sys.stats") || p.CanSubscribe("$sys.other") {
		t.Fatalf("demo default role: %+v", p)
	}
	// Connections is derived from the open-files limit (TestDefaultConnections);
	// the drain's spread is the edge's (the server's default is none).
	if opts.Limits != (server.Limits{Connections: defaultConnections(openFilesLimit()), DrainSpread: defaultDrainSpread}) || opts.AllowedOrigins != nil {
		t.Fatalf("default limits %+v, origins %v: want the server's defaults", opts.Limits, opts.AllowedOrigins)
	}
	// Partial files keep the other defaults.
	path, _ := writeConfig(t, "log: {format: json}\nlimits: {connections: 10}\n")
	c, err = LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Log.Level != "info" || c.Log.Format != "json" || c.Limits.Connections != 10 || c.Apps[0].Appkey != "demo" {
		t.Fatalf("partial config = %+v", c)
	}
}

// badConfig is a configuration file LoadConfig must refuse.
type badConfig struct {
	name string
	text string
	want []string // substrings of the error
}

// loadRefused loads tt's file, fails the test unless LoadConfig refuses
// it with an error holding every substring of tt.want, and returns the
// file's path and the error.
func loadRefused(t *testing.T, tt badConfig) (path string, err error) {
	t.Helper()
	path, _ = writeConfig(t, tt.text)
	if _, err = LoadConfig(path); err == nil {
		t.Fatal("LoadConfig succeeded")
	}
	for _, w := range tt.want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	return path, err
}

func TestLoadDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []badConfig{
		{name: "unknown top key", text: "listen: a:1\nlisten_addr: x\n", want: []string{`"listen_addr"`, "line 2"}},
		{name: "unknown nested key", text: "limits:\n  connections: 1\n  conections: 2\n", want: []string{"limits.conections", "line 3", `unknown key "conections"`}},
		{name: "unknown role key", text: "apps:\n  - appkey: a\n    roles:\n      admin: {secret: x, publsh: [a]}\n", want: []string{"apps[0].roles.admin.publsh", "line 4"}},
		{name: "unknown channel key", text: "apps:\n  - appkey: a\n    channels:\n      - pattern: x\n        tll: 1s\n", want: []string{"apps[0].channels[0].tll", "line 5"}},
		{name: "bad size unit", text: "limits:\n  store_bytes: 4XB\n", want: []string{"limits.store_bytes", "line 2", `invalid size "4XB"`}},
		{name: "fractional size", text: "store: {block_bytes: 1.5KiB}\n", want: []string{"store.block_bytes", "line 1"}},
		{name: "negative size", text: "limits: {queue_bytes: -1}\n", want: []string{"limits.queue_bytes", "invalid size"}},
		{name: "size list", text: "limits: {queue_bytes: [1]}\n", want: []string{"limits.queue_bytes", "want a size"}},
		{name: "duration without unit", text: "limits: {write_timeout: 60}\n", want: []string{"limits.write_timeout", `invalid duration "60"`}},
		{name: "negative duration", text: "limits:\n  ping_interval: -1s\n", want: []string{"limits.ping_interval", "line 2", "negative"}},
		{name: "bad history age", text: "apps:\n  - appkey: a\n    channels:\n      - pattern: x\n        history: {count: 1, age: soon}\n", want: []string{"apps[0].channels[0].history.age", "line 5"}},
		{name: "wrong type", text: "limits:\n  connections: many\n", want: []string{"limits.connections", "line 2"}},
		{name: "unquoted star", text: "apps:\n  - appkey: a\n    roles:\n      default: {publish: [*]}\n", want: []string{"line 4", "must be quoted"}},
		{name: "two documents", text: "listen: a:1\n---\nlisten: b:2\n", want: []string{"more than one YAML document"}},
		{name: "bad pattern", text: "apps:\n  - appkey: a\n    roles:\n      admin: {publish: [\"*\", \"a*b\"]}\n", want: []string{"apps[0].roles.admin.publish[1]", "a*b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, err := loadRefused(t, tt)
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(c *Config)
		want string // prefix of the error: the field path
	}{
		{name: "bad listen", edit: func(c *Config) { c.Listen = "8080" }, want: "listen:"},
		{name: "connections per ip below -1", edit: func(c *Config) { c.Limits.ConnectionsPerIP = -2 }, want: "limits.connections_per_ip:"},
		{name: "negative idle timeout", edit: func(c *Config) { c.Limits.IdleTimeout = Duration(-time.Second) }, want: "limits.idle_timeout:"},
		{name: "negative frame timeout", edit: func(c *Config) { c.Limits.FrameTimeout = Duration(-time.Second) }, want: "limits.frame_timeout:"},
		{name: "no apps", edit: func(c *Config) { c.Apps = nil }, want: "apps:"},
		{name: "spread past the shutdown timeout", edit: func(c *Config) {
			c.Limits.ShutdownTimeout, c.Limits.DrainSpread = Duration(4*time.Second), dur(4*time.Second)
		}, want: "limits.drain_spread:"},
		{name: "empty appkey", edit: func(c *Config) { c.Apps[0].Appkey = "" }, want: "apps[0].appkey:"},
		{name: "slash in appkey", edit: func(c *Config) { c.Apps[0].Appkey = "a/b" }, want: "apps[0].appkey:"},
		{name: "duplicate appkey", edit: func(c *Config) { c.Apps = append(c.Apps, c.Apps[0]) }, want: "apps[1].appkey:"},
		{name: "bad subscribe pattern", edit: func(c *Config) { c.Apps[0].Roles["default"] = RoleConfig{Subscribe: []string{"x", "", "y"}} }, want: "apps[0].roles.default.subscribe[1]:"},
		{name: "channel limit below -1", edit: func(c *Config) { c.Apps[0].MaxChannels = -2 }, want: "apps[0].max_channels:"},
		{name: "negative deflate threshold", edit: func(c *Config) { c.Apps[0].DeflateThreshold = -1 }, want: "apps[0].deflate_threshold:"},
		{name: "bad channel pattern", edit: func(c *Config) { c.Apps[0].Channels = []ChannelConfig{{Pattern: "**"}} }, want: "apps[0].channels[0].pattern:"},
		{name: "negative history", edit: func(c *Config) {
			c.Apps[0].Channels = []ChannelConfig{{Pattern: "*", History: HistoryConfig{Count: ptr(-1)}}}
		}, want: "apps[0].channels[0].history.count:"},
		{name: "zero ttl", edit: func(c *Config) { c.Apps[0].Channels = []ChannelConfig{{Pattern: "*", TTL: dur(0)}} }, want: "apps[0].channels[0].ttl:"},
		{name: "short jwt key", edit: func(c *Config) { c.Apps[0].JWTKey = "short" }, want: "apps[0].jwt_key:"},
		{name: "both jwt keys", edit: func(c *Config) { c.Apps[0].JWTKey, c.Apps[0].JWTKeyFile = strings.Repeat("k", 32), "k.pem" }, want: "apps[0].jwt_key:"},
		{name: "missing key file", edit: func(c *Config) { c.Apps[0].JWTKeyFile = "/nonexistent/k.pem" }, want: "apps[0].jwt_key_file:"},
		{name: "short api key", edit: func(c *Config) { c.Apps[0].APIKeys = []string{"short"} }, want: "apps[0].api_keys[0]:"},
		{name: "api key of two apps", edit: func(c *Config) {
			other := appConfigOf(app.Demo())
			other.Appkey, other.APIKeys = "other", []string{"a-key-of-two-apps-0123"}
			c.Apps[0].APIKeys = []string{"own-key-0123456789", "a-key-of-two-apps-0123"}
			c.Apps = append(c.Apps, other)
		}, want: "apps[1].api_keys[0]: the same key is apps[0].api_keys[1]"},
		{name: "negative connections", edit: func(c *Config) { c.Limits.Connections = -1 }, want: "limits.connections:"},
		{name: "negative rate", edit: func(c *Config) { c.Limits.RequestsPerSecond = -5 }, want: "limits.requests_per_second:"},
		{name: "negative burst", edit: func(c *Config) { c.Limits.RequestBurst = -1 }, want: "limits.request_burst:"},
		{name: "empty origin", edit: func(c *Config) { c.AllowedOrigins = []string{"a", " "} }, want: "allowed_origins[1]:"},
		{name: "bad log level", edit: func(c *Config) { c.Log.Level = "loud" }, want: "log.level:"},
		{name: "bad log format", edit: func(c *Config) { c.Log.Format = "xml" }, want: "log.format:"},
		{name: "cluster without data dir", edit: func(c *Config) { c.Cluster.Name, c.Cluster.Listen = "c", "127.0.0.1:6222" }, want: "cluster:"},
		{name: "embedded and external NATS", edit: func(c *Config) { c.Cluster.DataDir, c.NATS.URLs = "/tmp/x", []string{"nats://h:4222"} }, want: "nats.urls"},
		{name: "publish timeout past the duplicates window", edit: func(c *Config) { c.Cluster.DataDir, c.Cluster.PublishTimeout = "/tmp/x", Duration(3*time.Minute) }, want: "cluster.publish_timeout:"},
		{name: "publish timeout past 3/4 of a set window", edit: func(c *Config) {
			c.Cluster.DataDir, c.Cluster.Duplicates, c.Cluster.PublishTimeout = "/tmp/x", Duration(time.Minute), Duration(50*time.Second)
		}, want: "cluster.publish_timeout: 50s must be positive and at most 3/4 of cluster.duplicates (1m0s)"},
		{name: "duplicates window too short", edit: func(c *Config) {
			c.Cluster.DataDir, c.Cluster.ClientListen, c.Cluster.Duplicates = "/tmp/x", "127.0.0.1:4222", Duration(5*time.Second)
		}, want: "cluster.duplicates: 5s is under 20s"},
		{name: "a single node's duplicates window too short", edit: func(c *Config) { c.Cluster.DataDir, c.Cluster.Duplicates = "/tmp/x", Duration(3*time.Second) }, want: "cluster.duplicates: 3s is under 4s"},
		{name: "routes open to other hosts without a token", edit: func(c *Config) {
			c.Cluster.DataDir, c.Cluster.Name, c.Cluster.Listen = "/tmp/x", "c", "0.0.0.0:6222"
		}, want: "cluster.listen 0.0.0.0:6222"},
		{name: "short route token", edit: func(c *Config) {
			c.Cluster.DataDir, c.Cluster.Name, c.Cluster.Listen, c.Cluster.Token = "/tmp/x", "c", "10.0.0.5:6222", "short"
		}, want: "cluster.token:"},
		{name: "route token twice", edit: func(c *Config) {
			c.Cluster.DataDir, c.Cluster.Name, c.Cluster.Listen = "/tmp/x", "c", "127.0.0.1:6222"
			c.Cluster.Token, c.Cluster.TokenFile = strings.Repeat("t", 16), "token"
		}, want: "cluster: set token or token_file"},
		{name: "unauthenticated client listener off loopback", edit: func(c *Config) {
			c.Cluster.DataDir, c.Cluster.ClientListen = "/tmp/x", ":4222"
		}, want: "cluster.client_listen :4222"},
		{name: "too many replicas", edit: func(c *Config) { c.Cluster.Replicas = 7 }, want: "cluster.replicas:"},
		{name: "dotted stream name", edit: func(c *Config) { c.Cluster.Stream = "a.b" }, want: "cluster.stream:"},
		{name: "messages the replica cannot hold", edit: func(c *Config) {
			c.Cluster.DataDir, c.Apps[0].MaxMessageBytes, c.Limits.ChannelBytes = "/tmp/x", 1<<20, 2<<20
		}, want: "apps[0].max_message_bytes:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultConfig()
			tt.edit(c)
			err := c.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error starting %q", err, tt.want)
			}
			if _, err := c.ServerOptions(); err == nil {
				t.Fatal("ServerOptions accepted an invalid config")
			}
		})
	}
}

// TestClusterToken: routes on another host's reach are taken with a
// token, from the config, its file (relative to the config) or the
// environment.
func TestClusterToken(t *testing.T) {
	secret := "a-secret-every-node-shares"
	path, _ := writeConfig(t, "cluster:\n  data_dir: data\n  name: c\n  listen: 10.0.0.5:6222\n  token_file: token\n")
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "token"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatalf("a token file beside the config: %v", err)
	}
	if got, err := c.Cluster.routeToken(); got != secret || err != nil {
		t.Fatalf("routeToken = %q, %v; want the file's first line", got, err)
	}
	c.Cluster.TokenFile = ""
	t.Setenv("SLUICE_CLUSTER_TOKEN", secret)
	if err := c.Validate(); err != nil {
		t.Fatalf("the token from SLUICE_CLUSTER_TOKEN: %v", err)
	}
	if got, _ := c.Cluster.routeToken(); got != secret {
		t.Fatalf("routeToken = %q from the environment", got)
	}
}

func TestJWTKeyFileErrors(t *testing.T) {
	t.Parallel()
	path, _ := writeConfig(t, "apps:\n  - appkey: a\n    jwt_key_file: sluice.yaml\n")
	_, err := LoadConfig(path)
	if err == nil || !strings.Contains(err.Error(), "apps[0].jwt_key_file:") {
		t.Fatalf("a key file without PEM: %v", err)
	}
}

func TestDrainDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		yaml          string
		delay, spread time.Duration
	}{
		{name: "defaults", yaml: "", delay: 5 * time.Second, spread: 5 * time.Second},
		{name: "a short shutdown timeout halves the spread", yaml: "limits: {shutdown_timeout: 3s}", delay: 5 * time.Second, spread: 1500 * time.Millisecond},
		{name: "set", yaml: "limits: {drain_delay: 12s, drain_spread: 4s}", delay: 12 * time.Second, spread: 4 * time.Second},
		{name: "off", yaml: "limits: {drain_delay: 0s, drain_spread: 0s}", delay: 0, spread: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, _ := writeConfig(t, tt.yaml+"\n")
			c, err := LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			opts, err := c.ServerOptions()
			if err != nil {
				t.Fatal(err)
			}
			if d := c.Limits.drainDelay(); d != tt.delay || opts.Limits.DrainSpread != tt.spread {
				t.Fatalf("delay %v, spread %v; want %v, %v", d, opts.Limits.DrainSpread, tt.delay, tt.spread)
			}
		})
	}
}
