package edgecmd

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/app"
)

// TestWarnPayload: an app whose largest messages, or largest publishes
// arming a dead man's switch, NATS would refuse is named at the start,
// with what max_payload it needs; one that fits is not.
func TestWarnPayload(t *testing.T) {
	for _, tc := range []struct {
		msg  int
		want string // "" for no warning
	}{
		{64 << 10, ""},
		{200 << 10, "largest publishes with ttl and ttl_message"},
		{400 << 10, "largest messages"},
	} {
		var buf bytes.Buffer
		warnPayload([]*app.App{{Key: "chat", MaxMessageBytes: tc.msg}}, 1<<20, slog.New(slog.NewTextHandler(&buf, nil)))
		got := buf.String()
		switch {
		case tc.want == "" && got != "":
			t.Errorf("max_message_bytes %d within NATS's 1 MiB: warned %q", tc.msg, got)
		case tc.want != "" && (!strings.Contains(got, tc.want) || !strings.Contains(got, "app=chat") || !strings.Contains(got, "max_payload=1048576")):
			t.Errorf("max_message_bytes %d past NATS's 1 MiB: warned %q, want %q naming the app and max_payload", tc.msg, got, tc.want)
		}
	}
}
