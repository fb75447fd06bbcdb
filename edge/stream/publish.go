package stream

import (
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/shared/rtm"
)

// PublishEncoder answers a one-shot request the edge made for a client
// (POST /v2/publish): it waits for the replies to the edge's requests
// (authenticate, then the publish) and answers the last one as the
// response, its body the reply's body as RTM has it: 200 with
// {"position"} for rtm/publish/ok, else the error's status with
// {"error", "reason", ...}.
type PublishEncoder struct {
	pending int // replies not in yet
}

// NewPublishEncoder returns the encoder of a request that waits for
// replies replies.
func NewPublishEncoder(replies int) *PublishEncoder { return &PublishEncoder{pending: replies} }

// Message implements Encoder.
func (e *PublishEncoder) Message(w *Wire, _ byte, p []byte) {
	if w.ended {
		return
	}
	action, body := text(field(p, "action")), field(p, "body")
	switch {
	case strings.HasSuffix(action, "/error"):
		w.RespondJSON(Status(rtm.Code(text(field(body, "error")))), body)
	case strings.HasSuffix(action, "/ok"):
		if e.pending--; e.pending == 0 {
			w.RespondJSON(http.StatusOK, body)
		}
	}
}

// KeepAlive implements Encoder: nothing, the response is not started.
func (e *PublishEncoder) KeepAlive(*Wire) {}

// Closing implements Encoder: a session closed before it answered.
func (e *PublishEncoder) Closing(w *Wire, _ int, reason string) {
	w.Respond(http.StatusServiceUnavailable, string(rtm.CodeUnavailable), reason)
}
