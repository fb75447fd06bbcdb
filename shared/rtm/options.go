package rtm

import "strings"

// Satori's request options beyond the basics (PROTOCOL.md, "Beyond the
// basics"). The edge refuses a value it does not know with
// invalid_format rather than ignore it: an app that asked for
// value_changes, or for the previous message, and silently got
// something else would misbehave without a clue.

// Values of the read option of rtm/publish, rtm/write and rtm/delete.
const (
	// ReadPrevious puts the previous message in every reply.
	ReadPrevious = "previous_message"
	// ReadPreviousOnOK puts it in an ok reply only.
	ReadPreviousOnOK = "previous_message_on_ok"
	// ReadPreviousOnError puts it in an error reply only (a
	// compare-and-set write refused: what the channel holds instead).
	ReadPreviousOnError = "previous_message_on_error"
)

// OnlyValueChanges is the only value of rtm/subscribe's only option.
const OnlyValueChanges = "value_changes"

// CodePositionMismatch refuses an rtm/write with position (a
// compare-and-set) whose position is not the channel's newest message's;
// nothing was stored. Read the channel (or ask for the previous message
// with read) and write again.
const CodePositionMismatch Code = "position_mismatch"

// Previous is the channel's message before a publish, write or delete, in
// a reply that asked for it with read. With no previous message, Message
// is null and Position is where the channel stood ("0:0" for a channel
// the edge does not hold).
type Previous struct {
	Message  any    `json:"message"`
	Position string `json:"position"`
}

// PreviousReply is the ok reply of rtm/publish, rtm/write and rtm/delete
// that asked for the previous message. Position is empty after a purge.
type PreviousReply struct {
	Position string    `json:"position,omitempty"`
	Previous *Previous `json:"previous,omitempty"`
}

// Values implements ValueCarrier.
func (b *PreviousReply) Values() []*any {
	if b.Previous == nil {
		return nil
	}
	return []*any{&b.Previous.Message}
}

// PreviousError is an error reply that asked for the previous message
// (read: previous_message or previous_message_on_error).
type PreviousError struct {
	Error    string    `json:"error"`
	Reason   string    `json:"reason"`
	Previous *Previous `json:"previous,omitempty"`
}

// Values implements ValueCarrier.
func (b *PreviousError) Values() []*any {
	if b.Previous == nil {
		return nil
	}
	return []*any{&b.Previous.Message}
}

// HasOptions reports whether b uses any of Satori's options past channel
// and message (ExcludeSelf, an extension, is not one: see HasFields).
func (b *PublishBody) HasOptions() bool {
	return b.Position != "" || b.TTL != nil || b.TTLMessage != nil || b.Read != ""
}

// HasFields reports whether b has any field past channel and message;
// codecs write a body without them as the two fields alone.
func (b *PublishBody) HasFields() bool { return b.HasOptions() || b.ExcludeSelf }

// BodyKeys is a body decoded for the keys it has, whatever their values.
// A body decoded into its struct cannot tell a key given as "" or null
// from a key left out, and for the position of rtm/write that is the
// difference between a compare-and-set and an unconditional write: a
// client that lost its read and sends "position": "" must be refused,
// not let overwrite what it never saw. Every codec decodes into it.
type BodyKeys map[string]Present

// Has reports whether the body has the key name, matched without case
// as the JSON codec matches field names (the most lenient codec: a key
// that one codec takes for name is never taken for an absent one).
func (k BodyKeys) Has(name string) bool {
	for key := range k {
		if strings.EqualFold(key, name) {
			return true
		}
	}
	return false
}

// Present is the value of a key in BodyKeys: nothing. Its decoding
// methods, which encoding/json, fxamacker/cbor and vmihailenco/msgpack
// each find by name, skip the value, so a large message is not decoded
// into values; null and nil leave the key in the map as any value does.
type Present struct{}

// UnmarshalJSON skips a value.
func (*Present) UnmarshalJSON([]byte) error { return nil }

// UnmarshalCBOR skips a value.
func (*Present) UnmarshalCBOR([]byte) error { return nil }

// UnmarshalMsgpack skips a value.
func (*Present) UnmarshalMsgpack([]byte) error { return nil }
