package rtm

import "strconv"

// Bounds of the string fields of requests, in bytes. An edge refuses a
// request past one with invalid_format, so that no client can make it
// hold, or echo back, more than a sensible name or proof needs (a
// subscription id is kept as long as the subscription lives; a role until
// the handshake ends).
const (
	// MaxSubscriptionIDLen bounds subscription_id, like channel names.
	MaxSubscriptionIDLen = MaxChannelLen
	// MaxPositionLen bounds position: two 20-digit numbers and a colon.
	MaxPositionLen = 41
	// MaxFilterLen bounds a view's SQL statement.
	MaxFilterLen = 16 << 10
	// MaxActionLen bounds action, and MaxStringIDLen an id given as a
	// string; both are echoed in the reply.
	MaxActionLen   = 64
	MaxStringIDLen = 256
	// MaxMethodLen bounds an authentication method's name.
	MaxMethodLen = 64
	// MaxRoleLen bounds a role name.
	MaxRoleLen = 256
	// MaxHashLen bounds a role_secret proof (24 bytes of base64 for
	// HMAC-MD5; room for others).
	MaxHashLen = 256
	// MaxTokenLen bounds a JWT.
	MaxTokenLen = 16 << 10
)

// TooLong returns the invalid_format error of a field longer than max
// bytes. The reason names the field, never quotes it.
func TooLong(field string, max int) *Error {
	return &Error{Code: CodeInvalidFormat, Reason: "Invalid PDU: '" + field + "' is longer than " + strconv.Itoa(max) + " bytes"}
}

// LengthChecker is implemented by request bodies whose string fields are
// bounded; CheckLengths returns the TooLong error of the first field past
// its bound, nil if none is. Channel names are checked with the rest of
// their rules by ValidateChannel.
type LengthChecker interface {
	CheckLengths() error
}

// field is one bounded field of a body.
type field struct {
	name string
	v    string
	max  int
}

func checkFields(fs ...field) error {
	for _, f := range fs {
		if len(f.v) > f.max {
			return TooLong(f.name, f.max)
		}
	}
	return nil
}

// CheckLengths implements LengthChecker.
func (b *ReadBody) CheckLengths() error {
	return checkFields(field{"position", b.Position, MaxPositionLen})
}

// CheckLengths implements LengthChecker.
func (b *SubscribeBody) CheckLengths() error {
	return checkFields(
		field{"subscription_id", b.SubscriptionID, MaxSubscriptionIDLen},
		field{"position", b.Position, MaxPositionLen},
		field{"filter", b.Filter, MaxFilterLen},
	)
}

// CheckLengths implements LengthChecker.
func (b *UnsubscribeBody) CheckLengths() error {
	return checkFields(field{"subscription_id", b.SubscriptionID, MaxSubscriptionIDLen})
}

// CheckLengths implements LengthChecker.
func (b *HandshakeBody) CheckLengths() error {
	return checkFields(field{"method", b.Method, MaxMethodLen}, field{"data.role", b.Data.Role, MaxRoleLen})
}

// CheckLengths implements LengthChecker.
func (b *AuthenticateBody) CheckLengths() error {
	return checkFields(
		field{"method", b.Method, MaxMethodLen},
		field{"credentials.hash", b.Credentials.Hash, MaxHashLen},
		field{"credentials.token", b.Credentials.Token, MaxTokenLen},
	)
}

// CheckEnvelope returns the TooLong error of an action or string id past
// its bound, nil if neither is.
func CheckEnvelope(action string, id ID) error {
	if len(action) > MaxActionLen {
		return TooLong("action", MaxActionLen)
	}
	if id.Kind == IDString && len(id.Str) > MaxStringIDLen {
		return TooLong("id", MaxStringIDLen)
	}
	return nil
}
