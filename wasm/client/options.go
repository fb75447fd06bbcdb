package client

import (
	"context"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// Options configure a Client. A nil *Options, and every zero field, means
// the documented default; AppKey alone is required.
type Options struct {
	// AppKey names the app to connect to. Required.
	AppKey string
	// Role and RoleSecret authenticate with the role_secret method after
	// each connect. Empty Role: the app's default role.
	Role, RoleSecret string
	// Token authenticates with a JWT (Sluice's jwt extension) instead of
	// a role secret; set Token or Role, not both.
	Token string
	// TokenFunc, when set, returns the JWT to authenticate with, at each
	// connect and again before the token's exp (a quarter of its life
	// before, at most a minute), so that the edge never ends a
	// subscription for an expired grant (Sluice's grant refresh
	// extension). Set Token, TokenFunc or Role, not two. ctx bounds the
	// call (DialTimeout).
	TokenFunc func(ctx context.Context) (string, error)
	// Codec is the encoding: "msgpack" (default), "json" or "cbor". An
	// edge that does not accept it (no subprotocol chosen) gets JSON, the
	// RTM default. The browser build speaks msgpack only.
	Codec string
	// MinBackoff and MaxBackoff bound the delay between reconnection
	// attempts (exponential growth with full jitter); defaults 100ms and
	// 10s. The delay starts over once a connection has stayed up for
	// MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// PingInterval is how often the client pings the edge to notice a
	// dead connection (half-open TCP); default 30s, negative disables.
	// Browsers cannot send pings: there it does nothing.
	PingInterval time.Duration
	// DialTimeout bounds one connection attempt (WebSocket handshake and
	// authentication); default 15s.
	DialTimeout time.Duration
	// DeliveryBufferBytes bounds the subscription data waiting for the
	// handlers, in encoded bytes; default 8 MiB. See the package
	// documentation for what happens when handlers fall that far behind.
	DeliveryBufferBytes int
	// Logger receives the client's logs. Natively Logger is *slog.Logger
	// and the default slog.Default(); in the browser build it is a small
	// console logger (see NewLogger) and the default logs Info and above
	// to the browser console.
	Logger *Logger
	// OnState, when set, is called with each new State, on the delivery
	// goroutine (see the package documentation).
	OnState func(State)
	// HTTPHeader is sent with the WebSocket handshake (not in browsers,
	// which do not allow it). An http.Header fits; the field is a plain
	// map so that the browser build does not link net/http.
	HTTPHeader map[string][]string
	// NetDial, when set, opens the TCP connection under the WebSocket
	// (not in browsers). A load generator uses it to spread connections
	// over several loopback source addresses.
	NetDial NetDialFunc
	// Deflate offers permessage-deflate (RFC 7692, no context takeover)
	// in the handshake; the edge accepts it for apps that enable it.
	// Default off. Not in browsers, whose WebSocket offers it by itself.
	Deflate bool
}

// Defaults of Options.
const (
	DefaultCodec               = "msgpack"
	DefaultMinBackoff          = 100 * time.Millisecond
	DefaultMaxBackoff          = 10 * time.Second
	DefaultPingInterval        = 30 * time.Second
	DefaultDialTimeout         = 15 * time.Second
	DefaultDeliveryBufferBytes = 8 << 20
)

// withDefaults returns a copy of o with defaults filled in, or an error
// for options that contradict each other.
func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Codec == "" {
		r.Codec = DefaultCodec
	}
	if r.MinBackoff <= 0 {
		r.MinBackoff = DefaultMinBackoff
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = DefaultMaxBackoff
	}
	r.MaxBackoff = max(r.MaxBackoff, r.MinBackoff)
	if r.PingInterval == 0 {
		r.PingInterval = DefaultPingInterval
	}
	if r.DialTimeout <= 0 {
		r.DialTimeout = DefaultDialTimeout
	}
	if r.DeliveryBufferBytes <= 0 {
		r.DeliveryBufferBytes = DefaultDeliveryBufferBytes
	}
	if r.Logger == nil {
		r.Logger = defaultLogger()
	}
	switch {
	case r.AppKey == "":
		return r, errtext.Kind(ErrOptions, "AppKey is required")
	case r.Token != "" && r.Role != "":
		return r, errtext.Kind(ErrOptions, "set Token or Role, not both")
	case r.TokenFunc != nil && (r.Token != "" || r.Role != ""):
		return r, errtext.Kind(ErrOptions, "set TokenFunc, Token or Role, not two")
	case r.Role != "" && r.RoleSecret == "":
		return r, errtext.Kind(ErrOptions, "role "+strconv.Quote(r.Role)+" needs a RoleSecret")
	case r.Role == "" && r.RoleSecret != "":
		return r, errtext.Kind(ErrOptions, "RoleSecret without Role")
	}
	return r, nil
}

// State is the state of a Client's connection.
type State int

// States of a Client. A client goes Connecting -> Connected once; then
// Disconnected -> Reconnecting -> Connected each time the connection drops;
// Closed after Close.
const (
	// Connecting: Dial is opening the first connection.
	Connecting State = iota
	// Connected: authenticated and every subscription restored.
	Connected
	// Disconnected: the connection dropped; a reconnect is scheduled.
	Disconnected
	// Reconnecting: a reconnection attempt is under way.
	Reconnecting
	// Closed: Close was called; the client is done.
	Closed
)

var stateNames = [...]string{"connecting", "connected", "disconnected", "reconnecting", "closed"}

// String returns the state in lower case, as client-js reports it.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "State(" + strconv.Itoa(int(s)) + ")"
	}
	return stateNames[s]
}
