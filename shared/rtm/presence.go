package rtm

// Presence (extension): who is in a channel. A connection's user id comes
// from its token's sub claim (or the app's connect hook); a user with
// several connections in a channel is one member.
const (
	// ActionPresence asks for a channel's members and counts.
	ActionPresence = "rtm/presence"
	// ActionSubscriptionPresence pushes a presence subscription's first
	// members (a snapshot) and then each join and leave.
	ActionSubscriptionPresence = "rtm/subscription/presence"
)

// The events of rtm/subscription/presence.
const (
	// PresenceMembers is the snapshot a presence subscription starts
	// with: the channel's first members in user id order; More says the
	// channel has more, to page with ActionPresence after the last.
	PresenceMembers = "members"
	PresenceJoin    = "join"
	PresenceLeave   = "leave"
	// PresenceCount: anonymous connections came or went; only the
	// counts changed (Members is empty).
	PresenceCount = "count"
)

// Bounds of presence.
const (
	// MaxUserIDLen bounds a user id (a token's sub), like channel names.
	MaxUserIDLen = MaxChannelLen
	// MaxPresenceLimit is the most members one rtm/presence reply
	// carries; DefaultPresenceLimit when no limit is asked.
	MaxPresenceLimit     = 1000
	DefaultPresenceLimit = 100
)

// PresenceBody is the body of rtm/presence: the members of channel whose
// user ids sort after After, at most Limit of them.
type PresenceBody struct {
	Channel string `json:"channel"`
	After   string `json:"after,omitempty"`
	Limit   int64  `json:"limit,omitempty"`
}

// CheckLengths implements LengthChecker.
func (b *PresenceBody) CheckLengths() error {
	return checkFields(field{"after", b.After, MaxUserIDLen})
}

// PresenceMember is one member of a channel: a user id, the user's info
// (omitted when none) and, in rtm/presence replies and snapshots, how many
// of the user's connections are in the channel.
type PresenceMember struct {
	UserID      string `json:"user_id"`
	Info        any    `json:"info,omitempty"`
	Connections int64  `json:"connections,omitempty"`
}

// PresenceReply is the reply to rtm/presence: the channel's counts (Users
// members; Connections, anonymous ones included) and a page of members in
// user id order. Next, when set, is the After of the next page.
type PresenceReply struct {
	Users       int64            `json:"users"`
	Connections int64            `json:"connections"`
	Members     []PresenceMember `json:"members"`
	Next        string           `json:"next,omitempty"`
}

// Values implements ValueCarrier.
func (b *PresenceReply) Values() []*any { return memberValues(b.Members) }

// SubscriptionPresence is the body of rtm/subscription/presence. Event is
// PresenceMembers (the snapshot: Members are the first members), or
// PresenceJoin or PresenceLeave (Members holds the one who joined or
// left). Users and Connections are the channel's counts after it.
type SubscriptionPresence struct {
	SubscriptionID string           `json:"subscription_id"`
	Event          string           `json:"event"`
	Members        []PresenceMember `json:"members"`
	More           bool             `json:"more,omitempty"`
	Users          int64            `json:"users"`
	Connections    int64            `json:"connections"`
}

// Values implements ValueCarrier.
func (b *SubscriptionPresence) Values() []*any { return memberValues(b.Members) }

func memberValues(ms []PresenceMember) []*any {
	p := make([]*any, len(ms))
	for i := range ms {
		p[i] = &ms[i].Info
	}
	return p
}
