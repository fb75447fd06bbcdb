package client

import "errors"

// Errors of the client. Protocol refusals from the edge are *rtm.Error
// values instead (use rtm.AsError), carrying the RTM code.
var (
	// ErrClosed is returned by every call on a closed Client, and is the
	// Err of its subscriptions after Close.
	ErrClosed = errors.New("client: closed")
	// ErrDisconnected is returned for a request whose connection dropped
	// before its reply came, and by PublishNoAck while reconnecting. The
	// request may or may not have been carried out; the client does not
	// retry it because a publish could then be stored twice.
	ErrDisconnected = errors.New("client: disconnected")
	// ErrUnsubscribed is the Err of a subscription ended by Unsubscribe.
	ErrUnsubscribed = errors.New("client: unsubscribed")
	// ErrReplaced is the Err of a subscription replaced by a Subscribe
	// with the same id and Force.
	ErrReplaced = errors.New("client: subscription replaced")
	// ErrURL reports an endpoint URL the client cannot use.
	ErrURL = errors.New("client: bad url")
	// ErrOptions reports inconsistent Options or SubscribeOptions.
	ErrOptions = errors.New("client: bad options")
	// ErrNetwork reports, in the browser, a WebSocket that could not be
	// opened for a reason the page may not read: the edge unreachable
	// (DNS, TCP, TLS), or a refusal without CORS for the page's origin.
	// A refusal the page can read is an *rtm.Error (invalid_appkey, ...).
	ErrNetwork = errors.New("client: network")
	// ErrRefused reports an HTTP refusal of the WebSocket upgrade that
	// carried no RTM error body.
	ErrRefused = errors.New("client: upgrade refused")
	// ErrUnexpectedReply reports a reply whose action does not answer the
	// request it carries the id of.
	ErrUnexpectedReply = errors.New("client: unexpected reply")
)
