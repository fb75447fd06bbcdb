package stream

import (
	"encoding/json"
	"net/http"

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
	var m pdu
	if w.ended || json.Unmarshal(p, &m) != nil {
		return
	}
	var b struct {
		Error string `json:"error"`
	}
	switch {
	case len(m.Action) > 6 && m.Action[len(m.Action)-6:] == "/error":
		_ = json.Unmarshal(m.Body, &b)
		w.RespondJSON(Status(rtm.Code(b.Error)), m.Body)
	case len(m.Action) > 3 && m.Action[len(m.Action)-3:] == "/ok":
		if e.pending--; e.pending == 0 {
			w.RespondJSON(http.StatusOK, m.Body)
		}
	}
}

// KeepAlive implements Encoder: nothing, the response is not started.
func (e *PublishEncoder) KeepAlive(*Wire) {}

// Closing implements Encoder: a session closed before it answered.
func (e *PublishEncoder) Closing(w *Wire, _ int, reason string) {
	w.Respond(http.StatusServiceUnavailable, string(rtm.CodeUnavailable), reason)
}
