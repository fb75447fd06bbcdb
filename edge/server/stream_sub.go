package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/edge/stream"
	"github.com/sluicehq/sluice/shared/rtm"
)

// maxStreamChannels bounds the channels one subscribe stream names; the
// app's subscription limit per connection applies as well.
const maxStreamChannels = 64

// subscribeRequest is what a GET of PathSubscribe asks for.
type subscribeRequest struct {
	channels    []string
	positions   []string // per channel, "" for none
	token       string
	ndjson      bool
	fastForward bool
	count       int // history.count; 0: none
}

// parseSubscribe reads a GET of PathSubscribe. Positions come from
// Last-Event-ID (EventSource's reconnect) or the position parameter.
func parseSubscribe(r *http.Request) (*subscribeRequest, error) {
	q := r.URL.Query()
	req := &subscribeRequest{channels: q["channel"], token: bearer(r),
		ndjson:      q.Get("format") == "ndjson" || strings.Contains(r.Header.Get("Accept"), stream.ContentTypeNDJSON),
		fastForward: q.Get("fast_forward") == "true" || q.Get("fast_forward") == "1"}
	switch n := len(req.channels); {
	case n == 0:
		return nil, fmt.Errorf("name at least one channel parameter")
	case n > maxStreamChannels:
		return nil, fmt.Errorf("at most %d channels per stream", maxStreamChannels)
	}
	for i, ch := range req.channels {
		if err := rtm.ValidateChannel(ch); err != nil {
			return nil, fmt.Errorf("channel %d: %w", i, err)
		}
		if slices.Index(req.channels, ch) != i {
			return nil, fmt.Errorf("channel %q is named twice", ch)
		}
	}
	pos := r.Header.Get("Last-Event-ID")
	if pos == "" {
		pos = q.Get("position")
	}
	req.positions = make([]string, len(req.channels))
	if pos != "" {
		ps := strings.Split(pos, ",")
		if len(ps) != len(req.channels) {
			return nil, fmt.Errorf("%d positions for %d channels", len(ps), len(req.channels))
		}
		for i, p := range ps {
			if _, err := rtm.ParsePosition(p); p != "" && err != nil {
				return nil, fmt.Errorf("position %d: %w", i, err)
			}
		}
		req.positions = ps
	}
	if c := q.Get("count"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("count must be a number of messages")
		}
		req.count = n
	}
	return req, nil
}

// bearer is the token of r: its Authorization bearer, else its token
// parameter (EventSource cannot set headers).
func bearer(r *http.Request) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return r.URL.Query().Get("token")
}

// requests are the PDUs the edge sends the session on the client's
// behalf: authenticate with the token, then subscribe to each channel
// with batch 1, so that each data PDU's position is its message's.
func (req *subscribeRequest) requests() []byte {
	var frames []byte
	add := func(action, id string, body any) {
		p, _ := json.Marshal(map[string]any{"action": action, "id": id, "body": body})
		frames = stream.AppendRequest(frames, p)
	}
	if req.token != "" {
		frames = stream.AppendRequest(frames, authRequest(req.token))
	}
	for i, ch := range req.channels {
		b := map[string]any{"channel": ch, "batch": 1}
		switch {
		case req.positions[i] != "":
			b["position"] = req.positions[i]
		case req.count > 0:
			b["history"] = map[string]int{"count": req.count}
		}
		if req.fastForward {
			b["fast_forward"] = true
		}
		add(rtm.ActionSubscribe, strconv.Itoa(i), b)
	}
	return frames
}

// openSubscribe serves a GET of PathSubscribe: a session the edge runs
// for the client, answered as the replies to its requests come
// (stream.SubscribeEncoder).
func (s *Server) openSubscribe(w http.ResponseWriter, r *http.Request) {
	if !s.originOK(w, r) {
		return
	}
	if r.Method != http.MethodGet {
		s.RefuseRequest(w, r, http.StatusMethodNotAllowed, string(rtm.CodeInvalidOperation), "subscribe with GET")
		return
	}
	req, err := parseSubscribe(r)
	if err != nil {
		s.RefuseRequest(w, r, http.StatusBadRequest, string(rtm.CodeInvalidFormat), err.Error())
		return
	}
	replies := len(req.channels)
	if req.token != "" {
		replies++
	}
	t, ok := s.openPlainStream(w, r, stream.NewSubscribeEncoder(req.channels, req.ndjson, replies))
	if !ok {
		return
	}
	if err := injectNow(t, req.requests()); err != nil {
		s.log.Debug("stream ended before its requests", "remote", r.RemoteAddr, "err", err)
	}
}

// readBody reads r's body, up to limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return b, nil
}
