package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// The hooks, as they are named in Stats and in the Sluice-Hook header.
const (
	HookConnect   = "connect"
	HookSubscribe = "subscribe"
	HookPublish   = "publish"
)

// hookIndex numbers the hooks for their counters.
var hookIndex = map[string]int{HookConnect: 0, HookSubscribe: 1, HookPublish: 2}

// HookNames are the hooks in the order of Stats.Hooks.
var HookNames = [3]string{HookConnect, HookSubscribe, HookPublish}

// ConnectRequest is what the connect hook is sent about a WebSocket
// upgrade, before it is made.
type ConnectRequest struct {
	Appkey string `json:"appkey"`
	// Connection is the id the connection will have (the server API's
	// disconnect names it).
	Connection string `json:"connection"`
	// Remote is the client's address as the edge sees it (a proxy's,
	// behind one: see Headers for X-Forwarded-For).
	Remote string `json:"remote"`
	// Token is the ?token= query parameter of the upgrade URL, the way a
	// browser, which cannot set headers on a WebSocket, passes one.
	Token string `json:"token,omitempty"`
	// Cookies are the request's cookies by name (the first of a name).
	Cookies map[string]string `json:"cookies,omitempty"`
	// Headers are the request's headers by canonical name, values of one
	// name joined with ", ", without the WebSocket handshake's own
	// (Upgrade, Connection, Sec-WebSocket-Key, -Version, -Extensions).
	Headers map[string]string `json:"headers,omitempty"`
}

// Permissions are channel patterns, as a role's in the config file.
type Permissions struct {
	Publish   []string `json:"publish"`
	Subscribe []string `json:"subscribe"`
}

// ConnectAnswer is the connect hook's answer. With Allow, the connection
// starts as User with Role (one of the app's roles) or with Permissions
// (not both; neither: the default role), and Info travels with its user
// (presence). Without, it is refused with Reason.
type ConnectAnswer struct {
	Allow       bool            `json:"allow"`
	Reason      string          `json:"reason,omitempty"`
	User        string          `json:"user,omitempty"`
	Role        string          `json:"role,omitempty"`
	Permissions *Permissions    `json:"permissions,omitempty"`
	Info        json.RawMessage `json:"info,omitempty"`
}

// SubscribeRequest is what the subscribe hook is sent about an
// rtm/subscribe that the connection's permissions allow.
type SubscribeRequest struct {
	Appkey         string `json:"appkey"`
	Connection     string `json:"connection"`
	User           string `json:"user,omitempty"`
	Role           string `json:"role"`
	Channel        string `json:"channel"`
	SubscriptionID string `json:"subscription_id"`
}

// PublishRequest is what the publish hook is sent about an rtm/publish
// (or rtm/write) that the connection's permissions allow; Message is the
// message in JSON (binary values as base64 strings).
type PublishRequest struct {
	Appkey     string          `json:"appkey"`
	Connection string          `json:"connection"`
	User       string          `json:"user,omitempty"`
	Role       string          `json:"role"`
	Channel    string          `json:"channel"`
	Message    json.RawMessage `json:"message"`
}

// Answer is the subscribe and publish hooks' answer: Allow, or not with
// Reason; a publish hook may replace the message with Message (in JSON;
// absent: the client's message as sent).
type Answer struct {
	Allow   bool            `json:"allow"`
	Reason  string          `json:"reason,omitempty"`
	Message json.RawMessage `json:"message,omitempty"`
}

// callCounters count one hook's outcomes; written by the callers' goroutines.
type callCounters struct {
	allowed, denied, failed atomic.Uint64
}

// HookStats are one hook's counts since the edge started.
type HookStats struct {
	Allowed, Denied, Failed uint64
}

// Connect asks the connect hook about a connection. Without a connect
// URL it allows, with nothing else. A failure is returned as err (for
// the caller to log), with the answer OnFailure makes of it.
func (h *Hooks) Connect(ctx context.Context, req *ConnectRequest) (*ConnectAnswer, error) {
	if h == nil || h.cfg.Connect == "" {
		return &ConnectAnswer{Allow: true}, nil
	}
	var a ConnectAnswer
	err := h.call(ctx, HookConnect, h.cfg.Connect, req, func(b []byte) error { return decodeConnect(b, &a) })
	if err != nil {
		return &ConnectAnswer{Allow: h.failAllows(), Reason: h.failReason(HookConnect)}, err
	}
	h.count(HookConnect, a.Allow)
	return &a, nil
}

// Subscribe asks the subscribe hook; see Connect.
func (h *Hooks) Subscribe(ctx context.Context, req *SubscribeRequest) (*Answer, error) {
	if h == nil || h.cfg.Subscribe == "" {
		return &Answer{Allow: true}, nil
	}
	return h.ask(ctx, HookSubscribe, h.cfg.Subscribe, req)
}

// Publish asks the publish hook; see Connect.
func (h *Hooks) Publish(ctx context.Context, req *PublishRequest) (*Answer, error) {
	if h == nil || h.cfg.Publish == "" {
		return &Answer{Allow: true}, nil
	}
	return h.ask(ctx, HookPublish, h.cfg.Publish, req)
}

// Has reports whether the hook of that name is configured.
func (h *Hooks) Has(name string) bool {
	if h == nil {
		return false
	}
	switch name {
	case HookConnect:
		return h.cfg.Connect != ""
	case HookSubscribe:
		return h.cfg.Subscribe != ""
	case HookPublish:
		return h.cfg.Publish != ""
	}
	return false
}

func (h *Hooks) ask(ctx context.Context, name, url string, req any) (*Answer, error) {
	var a Answer
	err := h.call(ctx, name, url, req, func(b []byte) error { return decodeAnswer(b, &a, name == HookPublish) })
	if err != nil {
		return &Answer{Allow: h.failAllows(), Reason: h.failReason(name)}, err
	}
	h.count(name, a.Allow)
	return &a, nil
}

// Failed turns an answer the caller could not use (a role the app does
// not have, a replacement message that does not decode) into a failure:
// it is counted as one instead of as the allowance it was, and the
// answer is the one OnFailure gives.
func (h *Hooks) Failed(name string) (allow bool, reason string) {
	c := &h.calls[hookIndex[name]]
	c.allowed.Add(^uint64(0))
	c.failed.Add(1)
	return h.failAllows(), h.failReason(name)
}

func (h *Hooks) failAllows() bool { return h.cfg.OnFailure == FailAllow }

// failReason is what a client is told of a hook that failed and denied:
// never why (the cause is the edge's log's).
func (h *Hooks) failReason(name string) string {
	if h.failAllows() {
		return ""
	}
	return failReason(name)
}

func failReason(name string) string { return "the app's " + name + " hook did not answer" }

func (h *Hooks) count(name string, allowed bool) {
	c := &h.calls[hookIndex[name]]
	if allowed {
		c.allowed.Add(1)
	} else {
		c.denied.Add(1)
	}
}

// call posts req to url, signed, within the hook timeout, and decodes a
// 2xx answer with decode. Any other outcome is an error, counted as a
// failure.
func (h *Hooks) call(ctx context.Context, name, url string, req any, decode func([]byte) error) error {
	err := h.roundTrip(ctx, name, url, req, decode)
	if err != nil {
		h.calls[hookIndex[name]].failed.Add(1)
		return fmt.Errorf("hook: %s hook %s: %w", name, url, err)
	}
	return nil
}

func (h *Hooks) roundTrip(ctx context.Context, name, url string, req any, decode func([]byte) error) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding the request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.timeout())
	defer cancel()
	status, answer, err := h.post(ctx, url, name, body)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return fmt.Errorf("answered HTTP %d", status)
	}
	return decode(answer)
}

// post sends one signed request and reads at most MaxAnswerBytes of the
// answer.
func (h *Hooks) post(ctx context.Context, url, name string, body []byte) (int, []byte, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("building the request: %w", err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("User-Agent", "sluice-edge")
	r.Header.Set("Sluice-Hook", name)
	r.Header.Set(SignatureHeader, Sign(h.cfg.Secret, h.now(), body))
	resp, err := h.client.Do(r)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(answer) > MaxAnswerBytes {
		return 0, nil, fmt.Errorf("the answer is larger than %d bytes", MaxAnswerBytes)
	}
	return resp.StatusCode, answer, nil
}

// now is the clock of signatures.
func (h *Hooks) now() time.Time { return time.Now() }
