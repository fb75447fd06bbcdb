package api

import (
	"encoding/json"
	"net/http"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Bounds of history.
const (
	// DefaultHistoryLimit is a history page's size when limit is not
	// given.
	DefaultHistoryLimit = 100
	// MaxHistoryLimit bounds limit, and count.
	MaxHistoryLimit = 1000
)

type historyRequest struct {
	Channel  string `json:"channel"`
	Position string `json:"position"`
	Count    int    `json:"count"`
	Limit    int    `json:"limit"`
}

// HistoryAnswer is a page of a channel's messages, oldest first; next,
// when set, is the position to ask for the following page.
type HistoryAnswer struct {
	Messages []HistoryItem `json:"messages"`
	Next     string        `json:"next,omitempty"`
}

// HistoryItem is one message with its own position.
type HistoryItem struct {
	Position string          `json:"position"`
	Message  json.RawMessage `json:"message"`
}

// history pages through a channel's messages from a position or from the
// newest count.
func (h *Handler) history(r *http.Request, appKey string, body []byte) (any, error) {
	var req historyRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if (req.Position == "") == (req.Count == 0) {
		return nil, invalid(`give "position" (the first message's) or "count" (the newest N), one of them`)
	}
	if req.Count < 0 || req.Count > MaxHistoryLimit {
		return nil, invalid(`"count" must be 1 to ` + itoa(MaxHistoryLimit))
	}
	if req.Limit < 0 || req.Limit > MaxHistoryLimit {
		return nil, invalid(`"limit" must be 1 to ` + itoa(MaxHistoryLimit) + " (default " + itoa(DefaultHistoryLimit) + ")")
	}
	limit := req.Limit
	if limit == 0 {
		limit = DefaultHistoryLimit
	}
	var at *rtm.Position
	if req.Position != "" {
		p, err := rtm.ParsePosition(req.Position)
		if err != nil {
			return nil, invalid("position " + quote(req.Position) + " is not EPOCH:OFFSET")
		}
		at = &p
	}
	page, err := h.srv.BackendHistory(r.Context(), appKey, req.Channel, at, req.Count, limit)
	if err != nil {
		return nil, err
	}
	out := &HistoryAnswer{Messages: make([]HistoryItem, len(page.Messages))}
	for i, m := range page.Messages {
		out.Messages[i] = HistoryItem{Position: m.Position.String(), Message: m.JSON}
	}
	if page.Next != nil {
		out.Next = page.Next.String()
	}
	return out, nil
}
