package api

import "net/http"

type disconnectRequest struct {
	Connection string `json:"connection"`
	User       string `json:"user"`
	Reason     string `json:"reason"`
}

// DisconnectAnswer is the answer of disconnect: how many connections of
// this edge were closed.
type DisconnectAnswer struct {
	Disconnected int `json:"disconnected"`
}

// disconnect closes a connection, or every connection of a user (close
// code 4000 with the reason given).
func (h *Handler) disconnect(_ *http.Request, appKey string, body []byte) (any, error) {
	var req disconnectRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	n, err := h.srv.BackendDisconnect(appKey, req.Connection, req.User, req.Reason)
	if err != nil {
		return nil, err
	}
	return &DisconnectAnswer{Disconnected: n}, nil
}

type unsubscribeRequest struct {
	Channel    string `json:"channel"`
	Connection string `json:"connection"`
	User       string `json:"user"`
}

// UnsubscribeAnswer is the answer of unsubscribe: how many subscriptions
// of this edge were ended.
type UnsubscribeAnswer struct {
	Unsubscribed int `json:"unsubscribed"`
}

// unsubscribe ends a user's (or a connection's) subscriptions to a
// channel.
func (h *Handler) unsubscribe(_ *http.Request, appKey string, body []byte) (any, error) {
	var req unsubscribeRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	n, err := h.srv.BackendUnsubscribe(appKey, req.Connection, req.User, req.Channel)
	if err != nil {
		return nil, err
	}
	return &UnsubscribeAnswer{Unsubscribed: n}, nil
}
