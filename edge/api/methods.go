package api

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
)

// method serves one API method for the app appKey names: it decodes body
// and returns the answer to marshal, or an error (see asError).
type method func(h *Handler, r *http.Request, appKey string, body []byte) (any, error)

var methods = map[string]method{
	"publish":     (*Handler).publish,
	"broadcast":   (*Handler).broadcast,
	"read":        (*Handler).read,
	"info":        (*Handler).info,
	"history":     (*Handler).history,
	"channels":    (*Handler).channels,
	"disconnect":  (*Handler).disconnect,
	"unsubscribe": (*Handler).unsubscribe,
	"presence":    (*Handler).presence,
	"token":       (*Handler).token,
	// presence_stats is O(1): a channel's counts without its members.
	"presence_stats": (*Handler).presenceStats,
}

// methodList names the methods, for the reason of unknown_method.
var methodList = func() string {
	names := make([]string, 0, len(methods))
	for n := range methods {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}()

// MaxBroadcastChannels bounds the channels of one broadcast.
const MaxBroadcastChannels = 100

type publishRequest struct {
	Channel        string          `json:"channel"`
	Message        json.RawMessage `json:"message"`
	IdempotencyKey string          `json:"idempotency_key"`
	// ExcludeConnection is the id of a connection (as hooks, presence
	// and disconnect name it) that is not to receive the message.
	ExcludeConnection string `json:"exclude_connection"`
}

// PublishAnswer is the answer of publish.
type PublishAnswer struct {
	Position string `json:"position"`
}

// publish stores a message in one channel.
func (h *Handler) publish(r *http.Request, appKey string, body []byte) (any, error) {
	var req publishRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	msg, err := decodeMessage(req.Message)
	if err != nil {
		return nil, err
	}
	run := func(id string) (any, error) {
		pos, err := h.srv.BackendPublishOnce(appKey, req.Channel, msg, id, req.ExcludeConnection)
		if err != nil {
			return nil, err
		}
		return &PublishAnswer{Position: pos.String()}, nil
	}
	return h.once(r, appKey, "publish", req.IdempotencyKey, msg, run, req.ExcludeConnection, req.Channel)
}

type broadcastRequest struct {
	Channels          []string        `json:"channels"`
	Message           json.RawMessage `json:"message"`
	IdempotencyKey    string          `json:"idempotency_key"`
	ExcludeConnection string          `json:"exclude_connection"`
}

// BroadcastAnswer is the answer of broadcast: one result per channel, in
// the order asked.
type BroadcastAnswer struct {
	Results []ChannelResult `json:"results"`
}

// ChannelResult is one channel's outcome in a broadcast: its position, or
// the error code and reason publish would have answered.
type ChannelResult struct {
	Channel  string `json:"channel"`
	Position string `json:"position,omitempty"`
	Error    string `json:"error,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// broadcast stores one message in several channels; each channel succeeds
// or fails on its own.
func (h *Handler) broadcast(r *http.Request, appKey string, body []byte) (any, error) {
	var req broadcastRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if len(req.Channels) == 0 {
		return nil, invalid(`field "channels" must list at least one channel`)
	}
	if len(req.Channels) > MaxBroadcastChannels {
		return nil, invalid("a broadcast takes at most " + itoa(MaxBroadcastChannels) + " channels; " + itoa(int64(len(req.Channels))) + " were given")
	}
	msg, err := decodeMessage(req.Message)
	if err != nil {
		return nil, err
	}
	run := func(id string) (any, error) {
		out := &BroadcastAnswer{Results: make([]ChannelResult, len(req.Channels))}
		for i, ch := range req.Channels {
			out.Results[i].Channel = ch
			chID := id
			if id != "" {
				chID = id + "." + itoa(int64(i))
			}
			pos, err := h.srv.BackendPublishOnce(appKey, ch, msg, chID, req.ExcludeConnection)
			if err != nil {
				e, ok := asError(err)
				if !ok {
					h.log.Error("api: broadcast failed", "channel", ch, "err", err)
				}
				out.Results[i].Error, out.Results[i].Reason = e.Code, e.Reason
				continue
			}
			out.Results[i].Position = pos.String()
		}
		return out, nil
	}
	return h.once(r, appKey, "broadcast", req.IdempotencyKey, msg, run, req.ExcludeConnection, req.Channels...)
}

// once runs a storing method, through the idempotency window when the
// request has a key. run gets the id of the request's messages ("" with
// no key): with a journal, the log stores each once within its
// duplicates window whichever edge runs the request, so that a retry on
// another edge of a cluster gets the first answer's positions too. The
// id names the request's content as well as its key, as the window's
// fingerprint does; the connection excluded (exclude_connection, "" for
// none) is part of it: a key reused with another exclusion is another
// request.
func (h *Handler) once(r *http.Request, appKey, name, key string, msg any, run func(id string) (any, error), exclude string, channels ...string) (any, error) {
	if key == "" {
		return run("")
	}
	if len(key) > MaxIdempotencyKeyBytes {
		return nil, invalid("idempotency_key is longer than " + itoa(MaxIdempotencyKeyBytes) + " bytes")
	}
	canon, err := (jsoncodec.Codec{}).AppendValue(nil, msg)
	if err != nil {
		return nil, invalid("message cannot be encoded")
	}
	parts := [][]byte{canon}
	if exclude != "" { // without one, the fingerprint stays as it was
		// Before the channels; its NUL tells it from any (channel names
		// hold no control characters).
		parts = append(parts, []byte("exclude_connection\x00"+exclude))
	}
	for _, ch := range channels {
		parts = append(parts, []byte(ch))
	}
	scoped := appKey + "\x00" + name + "\x00" + key
	fp := fingerprint(parts...)
	id := fingerprint([]byte(scoped), fp[:])
	return h.window.do(r.Context(), scoped, fp, func() (any, error) { return run("api." + hex.EncodeToString(id[:16])) })
}

type readRequest struct {
	Channel  string `json:"channel"`
	Position string `json:"position"`
}

// ReadAnswer is the answer of read: the message at the position asked, or
// the newest; a null message when there is none (position is then where
// the next one will be, or the one asked).
type ReadAnswer struct {
	Position string          `json:"position"`
	Message  json.RawMessage `json:"message"`
}

// read returns one message of a channel.
func (h *Handler) read(r *http.Request, appKey string, body []byte) (any, error) {
	var req readRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	var at *rtm.Position
	if req.Position != "" {
		p, err := rtm.ParsePosition(req.Position)
		if err != nil {
			return nil, invalid("position " + quote(req.Position) + " is not EPOCH:OFFSET")
		}
		at = &p
	}
	pos, msg, found, err := h.srv.BackendRead(r.Context(), appKey, req.Channel, at)
	if err != nil {
		return nil, err
	}
	if !found {
		msg = []byte("null")
	}
	return &ReadAnswer{Position: pos, Message: msg}, nil
}
