package api

import (
	"net/http"

	"github.com/sluicehq/sluice/shared/rtm"
)

type presenceRequest struct {
	Channel string `json:"channel"`
	After   string `json:"after"`
	Limit   int    `json:"limit"`
}

// presence answers a page of a channel's members, in user id order, and
// its counts: rtm/presence's reply ({"users", "connections", "members",
// "next"}); "next", when set, is the "after" of the following page.
func (h *Handler) presence(_ *http.Request, appKey string, body []byte) (any, error) {
	var req presenceRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	out, err := h.srv.BackendPresence(appKey, req.Channel, req.After, req.Limit)
	if err != nil {
		return nil, err
	}
	if out.Members == nil {
		out.Members = []rtm.PresenceMember{}
	}
	return out, nil
}

type presenceStatsRequest struct {
	Channel string `json:"channel"`
}

// PresenceStatsAnswer is the answer of presence_stats: a channel's members
// (distinct user ids) and connections (anonymous ones included).
type PresenceStatsAnswer struct {
	Users       int `json:"users"`
	Connections int `json:"connections"`
}

// presenceStats answers a channel's counts, in O(1) however many members
// it has.
func (h *Handler) presenceStats(_ *http.Request, appKey string, body []byte) (any, error) {
	var req presenceStatsRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	users, conns, err := h.srv.BackendPresenceStats(appKey, req.Channel)
	if err != nil {
		return nil, err
	}
	return &PresenceStatsAnswer{Users: users, Connections: conns}, nil
}
