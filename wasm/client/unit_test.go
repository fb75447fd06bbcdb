package client

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// runtime.handleEvent is the js/wasm runtime's own goroutine, which runs
// a callback from JavaScript when the tests of the browser's code run
// under Node.js (make wasm-test); it is not the package's.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("runtime.handleEvent"))
}

func TestEndpointURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, endpoint, appkey, want string
		err                          error
	}{
		{name: "appends v2", endpoint: "ws://127.0.0.1:8080", appkey: "demo", want: "ws://127.0.0.1:8080/v2?appkey=demo"},
		{name: "trailing slash", endpoint: "wss://edge.example.com/", appkey: "demo", want: "wss://edge.example.com/v2?appkey=demo"},
		{name: "keeps vN", endpoint: "wss://edge.example.com/rtm/v3", appkey: "k", want: "wss://edge.example.com/rtm/v3?appkey=k"},
		{name: "keeps v2 with slash", endpoint: "ws://h/v2/", appkey: "k", want: "ws://h/v2?appkey=k"},
		{name: "prefix path", endpoint: "ws://h/rtm", appkey: "k", want: "ws://h/rtm/v2?appkey=k"},
		{name: "v in name is not a version", endpoint: "ws://h/dev", appkey: "k", want: "ws://h/dev/v2?appkey=k"},
		{name: "http becomes ws", endpoint: "http://h:1", appkey: "k", want: "ws://h:1/v2?appkey=k"},
		{name: "https becomes wss", endpoint: "HTTPS://h", appkey: "k", want: "wss://h/v2?appkey=k"},
		{name: "replaces appkey, keeps query", endpoint: "ws://h?x=1&appkey=old", appkey: "new key", want: "ws://h/v2?appkey=new+key&x=1"},
		{name: "no scheme", endpoint: "127.0.0.1:8080", appkey: "k", err: ErrURL},
		{name: "other scheme", endpoint: "ftp://h", appkey: "k", err: ErrURL},
		{name: "no host", endpoint: "ws:///v2", appkey: "k", err: ErrURL},
		{name: "no appkey", endpoint: "ws://h", appkey: "", err: ErrOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := endpointURL(tt.endpoint, tt.appkey)
			if !errors.Is(err, tt.err) {
				t.Fatalf("endpointURL(%q) error = %v, want %v", tt.endpoint, err, tt.err)
			}
			if got != tt.want {
				t.Errorf("endpointURL(%q) = %q, want %q", tt.endpoint, got, tt.want)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	b := backoff{min: 100 * time.Millisecond, max: 10 * time.Second}
	wantCeil := []time.Duration{100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000, 10000}
	for round := 0; round < 50; round++ {
		b.reset()
		for i, ceil := range wantCeil {
			ceil *= time.Millisecond
			if got := b.ceiling(); got != ceil {
				t.Fatalf("attempt %d: ceiling = %v, want %v", i, got, ceil)
			}
			if d := b.next(); d < 0 || d > ceil {
				t.Fatalf("attempt %d: delay %v outside [0, %v]", i, d, ceil)
			}
		}
	}
	// Many attempts later the cap still holds and nothing overflows.
	b.attempt = 1000
	if got := b.ceiling(); got != b.max {
		t.Errorf("ceiling after 1000 attempts = %v, want %v", got, b.max)
	}
}

func TestBackoffJitterSpreads(t *testing.T) {
	t.Parallel()
	b := backoff{min: time.Second, max: time.Second}
	seen := map[bool]int{}
	for i := 0; i < 200; i++ {
		seen[b.next() < 500*time.Millisecond]++
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Errorf("200 delays all on one side of half the cap: %v", seen)
	}
}

func TestRoleSecretHash(t *testing.T) {
	t.Parallel()
	// The test vector of PROTOCOL.md.
	if got := roleSecretHash("secret-key", "nonce"); got != "G12A8Dt0RdjHNx8P0lci9w==" {
		t.Errorf("roleSecretHash = %q, want G12A8Dt0RdjHNx8P0lci9w==", got)
	}
}

func TestOptionsWithDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts *Options
		err  error
	}{
		{name: "nil has no appkey", opts: nil, err: ErrOptions},
		{name: "appkey alone", opts: &Options{AppKey: "demo"}},
		{name: "role with secret", opts: &Options{AppKey: "demo", Role: "r", RoleSecret: "s"}},
		{name: "token", opts: &Options{AppKey: "demo", Token: "t"}},
		{name: "role without secret", opts: &Options{AppKey: "demo", Role: "r"}, err: ErrOptions},
		{name: "secret without role", opts: &Options{AppKey: "demo", RoleSecret: "s"}, err: ErrOptions},
		{name: "token and role", opts: &Options{AppKey: "demo", Token: "t", Role: "r", RoleSecret: "s"}, err: ErrOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := tt.opts.withDefaults()
			if !errors.Is(err, tt.err) {
				t.Fatalf("withDefaults() error = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if o.Codec != "msgpack" || o.MinBackoff != DefaultMinBackoff || o.MaxBackoff != DefaultMaxBackoff ||
				o.PingInterval != DefaultPingInterval || o.DeliveryBufferBytes != DefaultDeliveryBufferBytes || o.Logger == nil {
				t.Errorf("defaults not applied: %+v", o)
			}
		})
	}
}

func TestStateString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		state State
		want  string
	}{
		{name: "connecting", state: Connecting, want: "connecting"},
		{name: "connected", state: Connected, want: "connected"},
		{name: "disconnected", state: Disconnected, want: "disconnected"},
		{name: "reconnecting", state: Reconnecting, want: "reconnecting"},
		{name: "closed", state: Closed, want: "closed"},
		{name: "unknown", state: State(42), want: "State(42)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.state.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCodecByName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"msgpack", "json", "cbor"} {
		t.Run(name, func(t *testing.T) {
			cd, err := codecByName(name)
			if err != nil || cd.Name() != name {
				t.Fatalf("codecByName(%q) = %v, %v", name, cd, err)
			}
		})
	}
	if _, err := codecByName("xml"); !errors.Is(err, ErrOptions) {
		t.Errorf("codecByName(xml) error = %v, want ErrOptions", err)
	}
}

func TestMessageValue(t *testing.T) {
	t.Parallel()
	type chat struct {
		Text string   `json:"text"`
		Tags []string `json:"tags,omitempty"`
		N    int      `json:"n"`
	}
	tests := []struct {
		name string
		in   any
		want string // fmt %v of the result
	}{
		{name: "canonical map kept", in: map[string]any{"a": int64(1)}, want: "map[a:1]"},
		{name: "struct via json tags", in: chat{Text: "hi", Tags: []string{"x"}, N: 3}, want: "map[n:3 tags:[x] text:hi]"},
		{name: "typed slice", in: []string{"a", "b"}, want: "[a b]"},
		{name: "pointer to struct", in: &chat{Text: "p"}, want: "map[n:0 text:p]"},
		{name: "nil", in: nil, want: "<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := messageValue(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if s := sprint(got); s != tt.want {
				t.Errorf("messageValue(%#v) = %s, want %s", tt.in, s, tt.want)
			}
		})
	}
	if _, err := messageValue(func() {}); err == nil {
		t.Error("messageValue(func) succeeded, want an error")
	}
}

func TestCeilSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    time.Duration
		want int64
	}{
		{name: "zero", d: 0, want: 0},
		{name: "sub-second rounds up", d: time.Millisecond, want: 1},
		{name: "exact", d: 90 * time.Second, want: 90},
		{name: "fraction", d: 1500 * time.Millisecond, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ceilSeconds(tt.d); got != tt.want {
				t.Errorf("ceilSeconds(%v) = %d, want %d", tt.d, got, tt.want)
			}
		})
	}
}
