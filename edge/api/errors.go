package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Error codes of the API's own refusals; the methods' refusals carry RTM's
// codes (rtm.Code*).
const (
	CodeAuthenticationFailed = string(rtm.CodeAuthenticationFailed)
	CodeInvalidFormat        = string(rtm.CodeInvalidFormat)
	CodeUnknownMethod        = "unknown_method"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeRequestTooLarge      = "request_too_large"
	CodeIdempotencyMismatch  = "idempotency_key_reused"
	CodeInternal             = "internal_error"
	CodeTooManyRequests      = string(rtm.CodeTooManyRequests)
)

// Error is an API refusal: the HTTP status and the body's code and reason.
type Error struct {
	Status int
	Code   string
	Reason string

	retryAfter int // seconds, for Retry-After on a 429; 0: none
}

func (e *Error) Error() string { return "api: " + e.Code + ": " + e.Reason }

// ErrorBody is the JSON body of every refusal.
type ErrorBody struct {
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

// status maps an RTM code to the HTTP status of its refusal.
func status(c rtm.Code) int {
	switch c {
	case rtm.CodeChannelQuotaExceeded, rtm.CodeTooManyRequests:
		return http.StatusTooManyRequests
	case rtm.CodeExpiredPosition:
		return http.StatusGone
	case rtm.CodeUnavailable:
		return http.StatusServiceUnavailable
	case rtm.CodeAuthorizationDenied:
		return http.StatusForbidden
	}
	return http.StatusBadRequest
}

// asError maps err to the refusal a backend sees: an *Error as is, an
// *rtm.Error with its code, anything else as a 500 whose reason says
// nothing of the cause (which ok=false tells the caller to log).
func asError(err error) (e *Error, ok bool) {
	if ae, isAPI := err.(*Error); isAPI {
		return ae, true
	}
	if re, isRTM := rtm.AsError(err); isRTM {
		return &Error{Status: status(re.Code), Code: string(re.Code), Reason: re.Reason}, true
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Reason: "the edge failed to serve the request; see its logs"}, false
}

// fail answers a method's error, logging internal ones, and returns its
// code.
func (h *Handler) fail(w http.ResponseWriter, method string, err error) string {
	e, ok := asError(err)
	if !ok {
		h.log.Error("api: method failed", "method", method, "err", err)
	}
	writeError(w, e)
	return e.Code
}

func writeError(w http.ResponseWriter, err error) {
	e, _ := asError(err)
	setRetryAfter(w, e)
	writeJSON(w, e.Status, &ErrorBody{Error: e.Code, Reason: e.Reason})
}

// writeJSON answers v as JSON. Every value the API answers marshals (its
// types hold strings, numbers and raw JSON taken from the codec), so an
// error here is a bug, answered as a bare 500.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"internal_error","reason":"the answer could not be encoded"}` + "\n"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// quote quotes a client's text for a reason, cut short so that a reason
// never echoes a long path.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}
