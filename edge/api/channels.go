package api

import "net/http"

type channelsRequest struct {
	Prefix string `json:"prefix"`
	After  string `json:"after"`
	Limit  int    `json:"limit"`
}

// ChannelsAnswer is a page of channel names in byte order; next, when
// set, is the "after" of the following page.
type ChannelsAnswer struct {
	Channels []string `json:"channels"`
	Next     string   `json:"next,omitempty"`
}

// channels lists the app's live channels by prefix.
func (h *Handler) channels(r *http.Request, appKey string, body []byte) (any, error) {
	var req channelsRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if req.Limit < 0 || req.Limit > MaxHistoryLimit {
		return nil, invalid(`"limit" must be 1 to ` + itoa(MaxHistoryLimit) + " (default " + itoa(DefaultHistoryLimit) + ")")
	}
	limit := req.Limit
	if limit == 0 {
		limit = DefaultHistoryLimit
	}
	names, more, err := h.srv.BackendChannels(r.Context(), appKey, req.Prefix, req.After, limit)
	if err != nil {
		return nil, err
	}
	out := &ChannelsAnswer{Channels: names}
	if out.Channels == nil {
		out.Channels = []string{}
	}
	if more {
		out.Next = names[len(names)-1]
	}
	return out, nil
}
