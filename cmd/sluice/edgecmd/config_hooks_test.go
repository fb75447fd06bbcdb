package edgecmd

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/hook"
)

func TestLoadHooksConfig(t *testing.T) {
	t.Parallel()
	path, _ := writeConfig(t, `
apps:
  - appkey: chat
    roles:
      default: {subscribe: ["room.*"], publish: ["room.*"]}
    hooks:
      connect: https://app.example.com/sluice/connect
      subscribe: https://app.example.com/sluice/subscribe
      publish: https://app.example.com/sluice/publish
      secret: 0123456789abcdef0123456789abcdef
      timeout: 500ms
      on_failure: allow
      events:
        url: https://app.example.com/sluice/events
        kinds: [channel_occupied, disconnect]
        batch: 50
        flush: 1s
        queue: 500
        min_backoff: 50ms
        max_backoff: 1m
`)
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := c.ServerOptions()
	if err != nil {
		t.Fatal(err)
	}
	want := &hook.Config{
		Connect: "https://app.example.com/sluice/connect", Subscribe: "https://app.example.com/sluice/subscribe",
		Publish: "https://app.example.com/sluice/publish", Secret: "0123456789abcdef0123456789abcdef",
		Timeout: 500 * time.Millisecond, OnFailure: hook.FailAllow,
		Events: hook.EventsConfig{URL: "https://app.example.com/sluice/events", Kinds: []string{"channel_occupied", "disconnect"},
			Batch: 50, Flush: time.Second, Queue: 500, MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Minute},
	}
	if got := opts.Apps[0].Hooks; !reflect.DeepEqual(got, want) {
		t.Fatalf("hooks = %+v\nwant %+v", got, want)
	}
}

func TestHooksConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []badConfig{
		{"unknown key", "apps:\n  - appkey: a\n    hooks:\n      conect: http://x/\n", []string{"apps[0].hooks.conect", "line 4"}},
		{"unknown events key", "apps:\n  - appkey: a\n    hooks:\n      events: {url: http://x/, kind: [disconnect]}\n", []string{"apps[0].hooks.events.kind"}},
		{"no secret", "apps:\n  - appkey: a\n    hooks: {connect: http://x/}\n", []string{"apps[0].hooks.secret", "16 bytes"}},
		{"relative URL", "apps:\n  - appkey: a\n    hooks: {publish: /p, secret: 0123456789abcdef}\n", []string{"apps[0].hooks.publish", "absolute"}},
		{"bad on_failure", "apps:\n  - appkey: a\n    hooks: {connect: http://x/, secret: 0123456789abcdef, on_failure: retry}\n", []string{"apps[0].hooks.on_failure"}},
		{"bad kind", "apps:\n  - appkey: a\n    hooks: {secret: 0123456789abcdef, events: {url: http://x/, kinds: [connect]}}\n", []string{"apps[0].hooks.events.kinds[0]", `"connect"`}},
		{"long timeout", "apps:\n  - appkey: a\n    hooks: {connect: http://x/, secret: 0123456789abcdef, timeout: 1m}\n", []string{"apps[0].hooks.timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadRefused(t, tt)
			if strings.Contains(err.Error(), "0123456789abcdef") {
				t.Errorf("error %q quotes the secret", err)
			}
		})
	}
}
