package rtm

// The body types below carry `json` tags; every codec uses them as field
// names, so the wire shape is the same in JSON, CBOR and msgpack.
//
// Message values (fields typed any) hold the canonical data model after
// decoding: nil, bool, int64, uint64 (only above MaxInt64), float64, string,
// []byte, []any and map[string]any. Codecs normalize into it so a message
// re-encodes identically in every codec.

// ValueCarrier is implemented by bodies that carry message values; codecs
// use it to normalize those values after decoding.
type ValueCarrier interface {
	// Values returns pointers to every message value in the body.
	Values() []*any
}

// PublishBody is the body of rtm/publish and rtm/write. The fields after
// Message are Satori's options (see options.go); a publish without them
// encodes as {channel, message}.
type PublishBody struct {
	Channel string `json:"channel"`
	Message any    `json:"message"`
	// Position (rtm/write only) makes the write a compare-and-set: it is
	// stored only if Position is the channel's newest message's.
	Position string `json:"position,omitempty"`
	// TTL (seconds) and TTLMessage: if nothing else is published on the
	// channel within TTL, the edge publishes TTLMessage there.
	TTL        *int64 `json:"ttl,omitempty"`
	TTLMessage any    `json:"ttl_message,omitempty"`
	// Read asks for the channel's previous message in the reply: one of
	// the Read* constants.
	Read string `json:"read,omitempty"`
	// ExcludeSelf (*extension*) keeps the message from the publishing
	// connection's own subscriptions: everyone else subscribed gets it.
	ExcludeSelf bool `json:"exclude_self,omitempty"`
}

// Values implements ValueCarrier.
func (b *PublishBody) Values() []*any { return []*any{&b.Message, &b.TTLMessage} }

// ChannelBody is the body of rtm/delete.
type ChannelBody struct {
	Channel string `json:"channel"`
	// Purge drops the channel's history instead of publishing null.
	Purge bool `json:"purge,omitempty"`
	// Read asks for the channel's previous message in the reply.
	Read string `json:"read,omitempty"`
}

// PositionBody is the reply to rtm/publish, rtm/write and rtm/delete.
type PositionBody struct {
	Position string `json:"position"`
}

// ReadBody is the body of rtm/read.
type ReadBody struct {
	Channel  string `json:"channel"`
	Position string `json:"position,omitempty"`
}

// ReadReply is the reply to rtm/read. Message is null when nothing is there.
type ReadReply struct {
	Position string `json:"position"`
	Message  any    `json:"message"`
}

// Values implements ValueCarrier.
func (b *ReadReply) Values() []*any { return []*any{&b.Message} }

// History selects the start of a subscription from recent messages. Both
// fields are optional; Age is in seconds.
type History struct {
	Count *int64 `json:"count,omitempty"`
	Age   *int64 `json:"age,omitempty"`
}

// SubscribeBody is the body of rtm/subscribe.
type SubscribeBody struct {
	Channel        string   `json:"channel,omitempty"`
	SubscriptionID string   `json:"subscription_id,omitempty"`
	Position       string   `json:"position,omitempty"`
	History        *History `json:"history,omitempty"`
	FastForward    bool     `json:"fast_forward,omitempty"`
	Force          bool     `json:"force,omitempty"`
	Filter         string   `json:"filter,omitempty"`
	Period         int64    `json:"period,omitempty"`
	// Batch (extension), when positive, is the most messages one
	// rtm/subscription/data of the subscription carries; 1 makes each
	// data position the exact resume point of its one message. Default
	// (0): whatever is ready.
	Batch int64 `json:"batch,omitempty"`
	// Only, when OnlyValueChanges, skips a message equal to the previous
	// one delivered on the subscription.
	Only string `json:"only,omitempty"`
	// Prefix subscribes to every channel whose name starts with Channel.
	Prefix bool `json:"prefix,omitempty"`
	// Presence (extension) asks for the channel's members once and then
	// for each join and leave, as rtm/subscription/presence pushes; it
	// needs the presence permission on the channel.
	Presence bool `json:"presence,omitempty"`
	// Delta (extension) asks for each message after the first as a
	// fossil delta against the previous one the subscription got, where
	// that is smaller (SubscriptionData.Delta).
	Delta bool `json:"delta,omitempty"`
}

// SubscribeReply is the reply to rtm/subscribe.
type SubscribeReply struct {
	Position       string `json:"position"`
	SubscriptionID string `json:"subscription_id"`
}

// UnsubscribeBody is the body of rtm/unsubscribe.
type UnsubscribeBody struct {
	SubscriptionID string `json:"subscription_id"`
}

// UnsubscribeReply is the reply to rtm/unsubscribe: the position the
// subscription would have read next.
type UnsubscribeReply struct {
	Position       string `json:"position"`
	SubscriptionID string `json:"subscription_id"`
}

// SubscriptionData is the body of rtm/subscription/data. Position is the
// position just after the last message of the PDU.
type SubscriptionData struct {
	SubscriptionID string `json:"subscription_id"`
	// Channel names the channel of the messages in the data of a prefix
	// subscription; empty otherwise.
	Channel  string `json:"channel,omitempty"`
	Position string `json:"position"`
	Messages []any  `json:"messages"`
	// Delta (extension, only on a subscription that asked for it) says
	// every message is a fossil delta against the message before it: the
	// one before it in Messages, or for the first, the last message of
	// the subscription's previous data. A delta is binary in binary
	// codecs and a string of its bytes in JSON.
	Delta bool `json:"delta,omitempty"`
}

// Values implements ValueCarrier.
func (b *SubscriptionData) Values() []*any {
	p := make([]*any, len(b.Messages))
	for i := range b.Messages {
		p[i] = &b.Messages[i]
	}
	return p
}

// SubscriptionInfo is the body of rtm/subscription/info (fast_forward).
type SubscriptionInfo struct {
	Info               string `json:"info"`
	Reason             string `json:"reason"`
	Position           string `json:"position"`
	SubscriptionID     string `json:"subscription_id"`
	MissedMessageCount uint64 `json:"missed_message_count"`
}

// SubscriptionError is the body of rtm/subscription/error (out_of_sync);
// the subscription has ended.
type SubscriptionError struct {
	Error              string `json:"error"`
	Reason             string `json:"reason"`
	Position           string `json:"position,omitempty"`
	SubscriptionID     string `json:"subscription_id"`
	MissedMessageCount uint64 `json:"missed_message_count"`
}

// ErrorBody is the body of every error reply and of /error.
type ErrorBody struct {
	Error  string `json:"error"`
	Reason string `json:"reason"`
	// Position names the position concerned, where the error has one.
	Position string `json:"position,omitempty"`
	// SubscriptionID names the subscription concerned, where there is one.
	SubscriptionID string `json:"subscription_id,omitempty"`
}

// HandshakeBody is the body of auth/handshake.
type HandshakeBody struct {
	Method string        `json:"method"`
	Data   HandshakeData `json:"data"`
}

// HandshakeData names the role a role_secret handshake is for.
type HandshakeData struct {
	Role string `json:"role"`
}

// HandshakeReply is the reply to auth/handshake.
type HandshakeReply struct {
	Data NonceData `json:"data"`
}

// NonceData carries the nonce of a role_secret handshake.
type NonceData struct {
	Nonce string `json:"nonce"`
}

// AuthenticateBody is the body of auth/authenticate.
type AuthenticateBody struct {
	Method      string      `json:"method"`
	Credentials Credentials `json:"credentials"`
}

// Credentials holds the proof: Hash for role_secret, Token for the jwt
// extension.
type Credentials struct {
	Hash  string `json:"hash,omitempty"`
	Token string `json:"token,omitempty"`
}

// Empty is the empty body, as in the reply to a successful
// auth/authenticate.
type Empty struct{}

// Authentication methods.
const (
	MethodRoleSecret = "role_secret"
	MethodJWT        = "jwt" // extension
)
