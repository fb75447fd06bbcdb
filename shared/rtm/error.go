package rtm

import "errors"

// Code is an RTM error code, the stable part of an error reply; clients
// code against it.
type Code string

// Error codes of PROTOCOL.md.
const (
	CodeAuthorizationDenied       Code = "authorization_denied"
	CodeInvalidFormat             Code = "invalid_format"
	CodeInvalidOperation          Code = "invalid_operation"
	CodeInvalidService            Code = "invalid_service"
	CodeJSONParseError            Code = "json_parse_error"
	CodeCBORParseError            Code = "cbor_parse_error"
	CodeAuthenticationFailed      Code = "authentication_failed"
	CodeAuthMethodNotAllowed      Code = "auth_method_not_allowed"
	CodeAlreadySubscribed         Code = "already_subscribed"
	CodeNotSubscribed             Code = "not_subscribed"
	CodeExpiredPosition           Code = "expired_position"
	CodeOutOfSync                 Code = "out_of_sync"
	CodeInvalidFilter             Code = "invalid_filter"
	CodeSubscriptionQuotaExceeded Code = "subscription_quota_exceeded"
	// Extensions.
	CodeMessageTooLarge Code = "message_too_large"
	CodeTooManyRequests Code = "too_many_requests"
	CodeInvalidAppkey   Code = "invalid_appkey"
	// CodeChannelQuotaExceeded: a publish would create a channel past its
	// app's limit of live channels; nothing was stored. Publishing to an
	// existing channel still works. Named after RTM's
	// subscription_quota_exceeded, the same kind of refusal.
	CodeChannelQuotaExceeded Code = "channel_quota_exceeded"
	// CodeUnavailable: a durable or clustered edge could not store a
	// publish (its log is unreachable); nothing was stored, or at most
	// once: publishing again is safe.
	CodeUnavailable Code = "unavailable"
)

// InfoFastForward is the info of rtm/subscription/info when a subscription
// skipped expired messages.
const InfoFastForward = "fast_forward"

// Error is a protocol error: an RTM code and a reason for people. It is the
// one error type that reaches clients; internal errors are mapped to one
// before they leave the edge, never quoted.
type Error struct {
	Code   Code
	Reason string
	// Position and SubscriptionID, when set, are sent along in the error
	// body.
	Position       string
	SubscriptionID string
}

func (e *Error) Error() string { return "rtm: " + string(e.Code) + ": " + e.Reason }

// Body returns the error as a reply body.
func (e *Error) Body() *ErrorBody {
	return &ErrorBody{Error: string(e.Code), Reason: e.Reason, Position: e.Position, SubscriptionID: e.SubscriptionID}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
