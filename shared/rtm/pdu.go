package rtm

import (
	"strconv"
)

// Actions of RTM v2 requests. A reply or push appends "/" and an outcome.
const (
	ActionPublish          = "rtm/publish"
	ActionWrite            = "rtm/write"
	ActionDelete           = "rtm/delete"
	ActionRead             = "rtm/read"
	ActionSubscribe        = "rtm/subscribe"
	ActionUnsubscribe      = "rtm/unsubscribe"
	ActionHandshake        = "auth/handshake"
	ActionAuthenticate     = "auth/authenticate"
	ActionSubscriptionData = "rtm/subscription/data"
	ActionSubscriptionInfo = "rtm/subscription/info"
	ActionSubscriptionErr  = "rtm/subscription/error"
	// ActionError is the unsolicited reply to a frame that could not be
	// decoded at all.
	ActionError = "/error"
)

// Outcomes of a reply or push.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
	OutcomeData  = "data"
	OutcomeInfo  = "info"
)

// Reply returns the action of the reply to a request action with the given
// outcome, for example Reply("rtm/publish", OutcomeOK) == "rtm/publish/ok".
// The acknowledgments of the requests a busy edge answers most are
// constants, not a new string per reply.
func Reply(action, outcome string) string {
	if outcome == OutcomeOK {
		switch action {
		case ActionPublish:
			return ActionPublish + "/" + OutcomeOK
		case ActionWrite:
			return ActionWrite + "/" + OutcomeOK
		case ActionDelete:
			return ActionDelete + "/" + OutcomeOK
		}
	}
	return action + "/" + outcome
}

// IDKind says what an ID holds.
type IDKind uint8

const (
	// IDNone marks a request without id: it gets no reply.
	IDNone IDKind = iota
	// IDInt is an integer id, echoed as an integer.
	IDInt
	// IDString is a string id, echoed as a string.
	IDString
)

// ID is a request id. RTM echoes it with its type and value unchanged, so it
// remembers whether it was an integer or a string.
type ID struct {
	Kind IDKind
	Int  int64
	Str  string
}

// IntID returns an integer ID.
func IntID(n int64) ID { return ID{Kind: IDInt, Int: n} }

// StringID returns a string ID.
func StringID(s string) ID { return ID{Kind: IDString, Str: s} }

// IsZero reports whether the ID is absent.
func (id ID) IsZero() bool { return id.Kind == IDNone }

// String returns the id as text: the integer in decimal, the string as is,
// "" when absent. It is for logs; codecs encode the typed value.
func (id ID) String() string {
	switch id.Kind {
	case IDInt:
		return strconv.FormatInt(id.Int, 10)
	case IDString:
		return id.Str
	}
	return ""
}

// PDU is one protocol data unit with a typed body, the form in which
// requests are built and replies encoded. Body is one of the body types of
// this package (or any map-shaped value); nil encodes as an empty map.
type PDU struct {
	Action string
	ID     ID
	Body   any
}

// Envelope is a decoded frame whose body is still in the codec's encoding;
// the receiver picks the body type from the action and decodes it with the
// same codec. Body aliases the frame it was decoded from.
type Envelope struct {
	Action string
	ID     ID
	Body   []byte
}
