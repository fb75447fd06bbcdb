package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMatchPattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		channel string
		want    bool
	}{
		{name: "exact", pattern: "chat", channel: "chat", want: true},
		{name: "exact other", pattern: "chat", channel: "chat2", want: false},
		{name: "exact is case sensitive", pattern: "Chat", channel: "chat", want: false},
		{name: "exact not a prefix", pattern: "chat", channel: "cha", want: false},
		{name: "star matches ordinary", pattern: "*", channel: "anything", want: true},
		{name: "star excludes reserved", pattern: "*", channel: "$sys.stats", want: false},
		{name: "star excludes heartbeat", pattern: "*", channel: rtm.HeartbeatChannel, want: false},
		{name: "prefix", pattern: "chat.*", channel: "chat.room1", want: true},
		{name: "prefix matches itself", pattern: "chat.*", channel: "chat.", want: true},
		{name: "prefix other", pattern: "chat.*", channel: "chatroom", want: false},
		{name: "dollar star matches reserved", pattern: "$*", channel: "$sys.stats", want: true},
		{name: "dollar star excludes ordinary", pattern: "$*", channel: "chat", want: false},
		{name: "reserved prefix", pattern: "$sys.*", channel: "$sys.stats", want: true},
		{name: "reserved prefix other", pattern: "$sys.*", channel: "$other", want: false},
		{name: "reserved exact", pattern: "$sys.stats", channel: "$sys.stats", want: true},
		{name: "empty pattern", pattern: "", channel: "", want: true},
		{name: "empty pattern vs channel", pattern: "", channel: "x", want: false},
		{name: "unicode prefix", pattern: "café*", channel: "café-noir", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := MatchPattern(tt.pattern, tt.channel); got != tt.want {
				t.Fatalf("MatchPattern(%q, %q) = %v, want %v", tt.pattern, tt.channel, got, tt.want)
			}
		})
	}
}

func TestValidatePattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		want    error
	}{
		{name: "exact", pattern: "chat"},
		{name: "star", pattern: "*"},
		{name: "dollar star", pattern: "$*"},
		{name: "prefix", pattern: "a.b.*"},
		{name: "empty", pattern: "", want: ErrPatternEmpty},
		{name: "star in middle", pattern: "a*b", want: ErrPatternStar},
		{name: "two stars", pattern: "**", want: ErrPatternStar},
		{name: "control", pattern: "a\nb*", want: rtm.ErrChannelControl},
		{name: "bad utf8", pattern: "a\xff*", want: rtm.ErrChannelUTF8},
		{name: "too long", pattern: strings.Repeat("x", 257), want: rtm.ErrChannelLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidatePattern(tt.pattern)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("ValidatePattern(%q) = %v, want %v", tt.pattern, err, tt.want)
			}
		})
	}
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	p := Permissions{Publish: []string{"chat.*", "$heartbeat"}, Subscribe: []string{"*", "$sys.*"}}
	tests := []struct {
		name      string
		channel   string
		publish   bool
		subscribe bool
	}{
		{name: "prefix channel", channel: "chat.1", publish: true, subscribe: true},
		{name: "other channel", channel: "news", publish: false, subscribe: true},
		{name: "reserved granted exactly", channel: "$heartbeat", publish: true, subscribe: false},
		{name: "reserved granted by prefix", channel: "$sys.stats", publish: false, subscribe: true},
		{name: "reserved not granted", channel: "$secret", publish: false, subscribe: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := p.CanPublish(tt.channel); got != tt.publish {
				t.Errorf("CanPublish(%q) = %v, want %v", tt.channel, got, tt.publish)
			}
			if got := p.CanSubscribe(tt.channel); got != tt.subscribe {
				t.Errorf("CanSubscribe(%q) = %v, want %v", tt.channel, got, tt.subscribe)
			}
		})
	}
	if (Permissions{}).CanPublish("x") || (Permissions{}).CanSubscribe("x") {
		t.Fatal("empty permissions grant something")
	}
}

func TestPermissionsUnion(t *testing.T) {
	t.Parallel()
	a := Permissions{Publish: []string{"a", "b"}, Subscribe: []string{"s"}}
	b := Permissions{Publish: []string{"b", "c"}}
	u := a.Union(b)
	if got := strings.Join(u.Publish, ","); got != "a,b,c" {
		t.Fatalf("union publish = %s, want a,b,c", got)
	}
	if got := strings.Join(u.Subscribe, ","); got != "s" {
		t.Fatalf("union subscribe = %s, want s", got)
	}
	u.Publish[0] = "changed"
	if a.Publish[0] != "a" {
		t.Fatal("Union shares its result with an operand")
	}
	if e := (Permissions{}).Union(Permissions{}); e.Publish != nil || e.Subscribe != nil {
		t.Fatalf("union of nothing = %+v", e)
	}
}

func TestCanPublishAllocs(t *testing.T) {
	p := Demo().Roles[DefaultRole].Permissions
	allocs := testing.AllocsPerRun(100, func() {
		if !p.CanPublish("chat.room") || p.CanSubscribe("$sys") {
			t.Fatal("wrong answer")
		}
	})
	if allocs != 0 {
		t.Fatalf("CanPublish allocates %v times", allocs)
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	a := Demo()
	if err := a.Validate(); err != nil {
		t.Fatalf("Demo().Validate() = %v", err)
	}
	if a.Key != "demo" {
		t.Fatalf("Key = %q", a.Key)
	}
	perms := a.DefaultPermissions()
	for _, ch := range []string{"chat", "a.b.c", "x"} {
		if !perms.CanPublish(ch) || !perms.CanSubscribe(ch) {
			t.Errorf("demo default role cannot use %q", ch)
		}
	}
	if perms.CanPublish("$sys.stats") || perms.CanSubscribe("$sys.other") {
		t.Error("demo default role can use a reserved channel")
	}
	if !perms.CanSubscribe(StatsChannel) {
		t.Error("demo default role cannot read the edge's stats")
	}
	for name, r := range a.Roles {
		if r.Secret != "" {
			t.Errorf("demo role %q has a secret", name)
		}
	}
	if a.JWT != nil {
		t.Error("demo app accepts jwt")
	}
	if a.MaxMessage() != DefaultMaxMessageBytes {
		t.Errorf("MaxMessage = %d", a.MaxMessage())
	}
	if Demo() == a || Demo().Roles[DefaultRole] == a.Roles[DefaultRole] {
		t.Error("Demo shares state between calls")
	}
}

func TestRole(t *testing.T) {
	t.Parallel()
	a := Demo()
	a.Roles["admin"] = &Role{Name: "admin", Secret: "s"}
	a.Roles["ghost"] = nil
	if r, ok := a.Role("admin"); !ok || r.Secret != "s" {
		t.Fatalf("Role(admin) = %v, %v", r, ok)
	}
	if _, ok := a.Role("nobody"); ok {
		t.Fatal("Role(nobody) found")
	}
	if _, ok := a.Role("ghost"); ok {
		t.Fatal("nil role found")
	}
	empty := &App{Key: "k"}
	if p := empty.DefaultPermissions(); p.CanSubscribe("x") {
		t.Fatal("app without roles grants by default")
	}
}

func TestRetention(t *testing.T) {
	t.Parallel()
	chat := store.Retention{TTL: time.Minute, HistoryCount: 10}
	all := store.Retention{TTL: time.Hour}
	sys := store.Retention{TTL: time.Second}
	a := Demo()
	a.Channels = []ChannelRule{
		{Pattern: "chat.*", Retention: chat},
		{Pattern: "*", Retention: all},
		{Pattern: "$sys.*", Retention: sys},
	}
	tests := []struct {
		name    string
		channel string
		want    store.Retention
	}{
		{name: "first match wins", channel: "chat.1", want: chat},
		{name: "catch-all", channel: "news", want: all},
		{name: "reserved rule", channel: "$sys.stats", want: sys},
		{name: "reserved unmatched gets defaults", channel: "$other", want: store.Retention{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := a.Retention(tt.channel); got != tt.want {
				t.Fatalf("Retention(%q) = %+v, want %+v", tt.channel, got, tt.want)
			}
		})
	}
	if got := Demo().Retention("x"); got != (store.Retention{}) {
		t.Fatalf("app without rules: %+v", got)
	}
}

func TestMaxMessage(t *testing.T) {
	t.Parallel()
	if got := (&App{}).MaxMessage(); got != DefaultMaxMessageBytes {
		t.Fatalf("unset MaxMessage = %d", got)
	}
	if got := (&App{MaxMessageBytes: 100}).MaxMessage(); got != 100 {
		t.Fatalf("MaxMessage = %d", got)
	}
}

func TestChannelLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		configured int
		want       int
	}{
		{"unset", 0, DefaultMaxChannels},
		{"set", 10, 10},
		{"no limit", -1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := (&App{MaxChannels: tt.configured}).ChannelLimit(); got != tt.want {
				t.Fatalf("ChannelLimit() = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestStoreKey keeps two apps' channels apart in the shared store, even
// where one appkey and channel run into the other's.
func TestStoreKey(t *testing.T) {
	a, b := &App{Key: "ab"}, &App{Key: "a"}
	if ka, kb := a.StoreKey("c"), b.StoreKey("bc"); ka == kb {
		t.Fatalf("apps ab and a share the store key %q", ka)
	}
	if got := a.StoreKey("c"); got != "ab\x00c" {
		t.Fatalf("StoreKey = %q, want %q", got, "ab\x00c")
	}
}
