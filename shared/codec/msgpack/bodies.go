package msgpack

import (
	"unsafe"

	"github.com/sluicehq/sluice/shared/rtm"
)

// The fields of every body type of package rtm, for the body decoder
// (decode.go): static tables of each field's key, kind and offset in its
// struct, which sluice.wasm holds as data. Reflection would cost it about
// 30 KB gzipped, and tables built by code (of pointers to each field)
// 17 KB of code. Each table lists a struct's fields in the order it
// declares them, by the names of their json tags, which every codec
// follows; TestBodyTables checks every table against its struct's
// fields, tags, offsets and types, which is what makes writing through
// the offsets safe.

// fieldKind is the Go type of a field, which says how its value is read.
type fieldKind uint8

const (
	kindText      fieldKind = iota // string
	kindFlag                       // bool
	kindInt                        // int64
	kindIntPtr                     // *int64
	kindCount                      // uint64
	kindMessage                    // any, a message
	kindMessages                   // []any
	kindMembers                    // []rtm.PresenceMember
	kindStruct                     // a struct of package rtm (sub)
	kindStructPtr                  // a pointer to one (sub), allocated by sub.alloc
)

// field is a field of a struct: its key, its kind and where it is.
type field struct {
	key  string
	kind fieldKind
	off  uintptr
	sub  *table // of kindStruct, kindStructPtr and kindMembers
}

// table lists the fields of a struct type.
type table struct {
	fields []field
	// alloc returns a new zero struct of the type, for kindStructPtr.
	alloc func() unsafe.Pointer
}

// maxFields is the most fields a table has (rtm.SubscribeBody's), which
// a bit set of uint16 counts.
const maxFields = 13

// find returns the index in t of the field with key, or -1. Most keys
// differ from the others of their table in their length or first byte,
// which are compared first.
func (t *table) find(key []byte) int {
	if len(key) == 0 {
		return -1 // no field's key is empty
	}
	for i := range t.fields {
		if k := t.fields[i].key; len(k) == len(key) && k[0] == key[0] && k == string(key) {
			return i
		}
	}
	return -1
}

// tableOf returns the table of v, a pointer to a body type of package rtm,
// and the struct it points to; false if v is none of them.
func tableOf(v any) (*table, unsafe.Pointer, bool) {
	var t *table
	var p unsafe.Pointer
	switch b := v.(type) {
	case *rtm.PublishBody:
		t, p = &publishBody, unsafe.Pointer(b)
	case *rtm.ChannelBody:
		t, p = &channelBody, unsafe.Pointer(b)
	case *rtm.PositionBody:
		t, p = &positionBody, unsafe.Pointer(b)
	case *rtm.ReadBody:
		t, p = &readBody, unsafe.Pointer(b)
	case *rtm.ReadReply:
		t, p = &readReply, unsafe.Pointer(b)
	case *rtm.SubscribeBody:
		t, p = &subscribeBody, unsafe.Pointer(b)
	case *rtm.SubscribeReply:
		t, p = &subscribeReply, unsafe.Pointer(b)
	case *rtm.UnsubscribeBody:
		t, p = &unsubscribeBody, unsafe.Pointer(b)
	case *rtm.UnsubscribeReply:
		t, p = &unsubscribeReply, unsafe.Pointer(b)
	case *rtm.SubscriptionData:
		t, p = &subscriptionData, unsafe.Pointer(b)
	case *rtm.SubscriptionInfo:
		t, p = &subscriptionInfo, unsafe.Pointer(b)
	case *rtm.SubscriptionError:
		t, p = &subscriptionError, unsafe.Pointer(b)
	case *rtm.ErrorBody:
		t, p = &errorBody, unsafe.Pointer(b)
	case *rtm.HandshakeBody:
		t, p = &handshakeBody, unsafe.Pointer(b)
	case *rtm.HandshakeReply:
		t, p = &handshakeReply, unsafe.Pointer(b)
	case *rtm.AuthenticateBody:
		t, p = &authenticateBody, unsafe.Pointer(b)
	case *rtm.Empty:
		t, p = &empty, unsafe.Pointer(b)
	case *rtm.PreviousReply:
		t, p = &previousReply, unsafe.Pointer(b)
	case *rtm.PreviousError:
		t, p = &previousError, unsafe.Pointer(b)
	case *rtm.PresenceBody:
		t, p = &presenceBody, unsafe.Pointer(b)
	case *rtm.PresenceReply:
		t, p = &presenceReply, unsafe.Pointer(b)
	case *rtm.SubscriptionPresence:
		t, p = &subscriptionPresence, unsafe.Pointer(b)
	default:
		return nil, nil, false
	}
	return t, p, p != nil
}

// The tables, by struct type.
var (
	publishBody = table{fields: []field{
		{"channel", kindText, unsafe.Offsetof(rtm.PublishBody{}.Channel), nil},
		{"message", kindMessage, unsafe.Offsetof(rtm.PublishBody{}.Message), nil},
		{"position", kindText, unsafe.Offsetof(rtm.PublishBody{}.Position), nil},
		{"ttl", kindIntPtr, unsafe.Offsetof(rtm.PublishBody{}.TTL), nil},
		{"ttl_message", kindMessage, unsafe.Offsetof(rtm.PublishBody{}.TTLMessage), nil},
		{"read", kindText, unsafe.Offsetof(rtm.PublishBody{}.Read), nil},
		{"exclude_self", kindFlag, unsafe.Offsetof(rtm.PublishBody{}.ExcludeSelf), nil},
	}}
	channelBody = table{fields: []field{
		{"channel", kindText, unsafe.Offsetof(rtm.ChannelBody{}.Channel), nil},
		{"purge", kindFlag, unsafe.Offsetof(rtm.ChannelBody{}.Purge), nil},
		{"read", kindText, unsafe.Offsetof(rtm.ChannelBody{}.Read), nil},
	}}
	positionBody = table{fields: []field{
		{"position", kindText, unsafe.Offsetof(rtm.PositionBody{}.Position), nil},
	}}
	readBody = table{fields: []field{
		{"channel", kindText, unsafe.Offsetof(rtm.ReadBody{}.Channel), nil},
		{"position", kindText, unsafe.Offsetof(rtm.ReadBody{}.Position), nil},
	}}
	readReply = table{fields: []field{
		{"position", kindText, unsafe.Offsetof(rtm.ReadReply{}.Position), nil},
		{"message", kindMessage, unsafe.Offsetof(rtm.ReadReply{}.Message), nil},
	}}
	subscribeBody = table{fields: []field{
		{"channel", kindText, unsafe.Offsetof(rtm.SubscribeBody{}.Channel), nil},
		{"subscription_id", kindText, unsafe.Offsetof(rtm.SubscribeBody{}.SubscriptionID), nil},
		{"position", kindText, unsafe.Offsetof(rtm.SubscribeBody{}.Position), nil},
		{"history", kindStructPtr, unsafe.Offsetof(rtm.SubscribeBody{}.History), &history},
		{"fast_forward", kindFlag, unsafe.Offsetof(rtm.SubscribeBody{}.FastForward), nil},
		{"force", kindFlag, unsafe.Offsetof(rtm.SubscribeBody{}.Force), nil},
		{"filter", kindText, unsafe.Offsetof(rtm.SubscribeBody{}.Filter), nil},
		{"period", kindInt, unsafe.Offsetof(rtm.SubscribeBody{}.Period), nil},
		{"batch", kindInt, unsafe.Offsetof(rtm.SubscribeBody{}.Batch), nil},
		{"only", kindText, unsafe.Offsetof(rtm.SubscribeBody{}.Only), nil},
		{"prefix", kindFlag, unsafe.Offsetof(rtm.SubscribeBody{}.Prefix), nil},
		{"presence", kindFlag, unsafe.Offsetof(rtm.SubscribeBody{}.Presence), nil},
		{"delta", kindFlag, unsafe.Offsetof(rtm.SubscribeBody{}.Delta), nil},
	}}
	history = table{fields: []field{
		{"count", kindIntPtr, unsafe.Offsetof(rtm.History{}.Count), nil},
		{"age", kindIntPtr, unsafe.Offsetof(rtm.History{}.Age), nil},
	}, alloc: func() unsafe.Pointer { return unsafe.Pointer(new(rtm.History)) }}
	subscribeReply = table{fields: []field{
		{"position", kindText, unsafe.Offsetof(rtm.SubscribeReply{}.Position), nil},
		{"subscription_id", kindText, unsafe.Offsetof(rtm.SubscribeReply{}.SubscriptionID), nil},
	}}
	unsubscribeBody = table{fields: []field{
		{"subscription_id", kindText, unsafe.Offsetof(rtm.UnsubscribeBody{}.SubscriptionID), nil},
	}}
	unsubscribeReply = table{fields: []field{
		{"position", kindText, unsafe.Offsetof(rtm.UnsubscribeReply{}.Position), nil},
		{"subscription_id", kindText, unsafe.Offsetof(rtm.UnsubscribeReply{}.SubscriptionID), nil},
	}}
	subscriptionData = table{fields: []field{
		{"subscription_id", kindText, unsafe.Offsetof(rtm.SubscriptionData{}.SubscriptionID), nil},
		{"channel", kindText, unsafe.Offsetof(rtm.SubscriptionData{}.Channel), nil},
		{"position", kindText, unsafe.Offsetof(rtm.SubscriptionData{}.Position), nil},
		{"messages", kindMessages, unsafe.Offsetof(rtm.SubscriptionData{}.Messages), nil},
		{"delta", kindFlag, unsafe.Offsetof(rtm.SubscriptionData{}.Delta), nil},
	}}
	subscriptionInfo = table{fields: []field{
		{"info", kindText, unsafe.Offsetof(rtm.SubscriptionInfo{}.Info), nil},
		{"reason", kindText, unsafe.Offsetof(rtm.SubscriptionInfo{}.Reason), nil},
		{"position", kindText, unsafe.Offsetof(rtm.SubscriptionInfo{}.Position), nil},
		{"subscription_id", kindText, unsafe.Offsetof(rtm.SubscriptionInfo{}.SubscriptionID), nil},
		{"missed_message_count", kindCount, unsafe.Offsetof(rtm.SubscriptionInfo{}.MissedMessageCount), nil},
	}}
	subscriptionError = table{fields: []field{
		{"error", kindText, unsafe.Offsetof(rtm.SubscriptionError{}.Error), nil},
		{"reason", kindText, unsafe.Offsetof(rtm.SubscriptionError{}.Reason), nil},
		{"position", kindText, unsafe.Offsetof(rtm.SubscriptionError{}.Position), nil},
		{"subscription_id", kindText, unsafe.Offsetof(rtm.SubscriptionError{}.SubscriptionID), nil},
		{"missed_message_count", kindCount, unsafe.Offsetof(rtm.SubscriptionError{}.MissedMessageCount), nil},
	}}
	errorBody = table{fields: []field{
		{"error", kindText, unsafe.Offsetof(rtm.ErrorBody{}.Error), nil},
		{"reason", kindText, unsafe.Offsetof(rtm.ErrorBody{}.Reason), nil},
		{"position", kindText, unsafe.Offsetof(rtm.ErrorBody{}.Position), nil},
		{"subscription_id", kindText, unsafe.Offsetof(rtm.ErrorBody{}.SubscriptionID), nil},
	}}
	handshakeBody = table{fields: []field{
		{"method", kindText, unsafe.Offsetof(rtm.HandshakeBody{}.Method), nil},
		{"data", kindStruct, unsafe.Offsetof(rtm.HandshakeBody{}.Data), &handshakeData},
	}}
	handshakeData = table{fields: []field{
		{"role", kindText, unsafe.Offsetof(rtm.HandshakeData{}.Role), nil},
	}}
	handshakeReply = table{fields: []field{
		{"data", kindStruct, unsafe.Offsetof(rtm.HandshakeReply{}.Data), &nonceData},
	}}
	nonceData = table{fields: []field{
		{"nonce", kindText, unsafe.Offsetof(rtm.NonceData{}.Nonce), nil},
	}}
	authenticateBody = table{fields: []field{
		{"method", kindText, unsafe.Offsetof(rtm.AuthenticateBody{}.Method), nil},
		{"credentials", kindStruct, unsafe.Offsetof(rtm.AuthenticateBody{}.Credentials), &credentials},
	}}
	credentials = table{fields: []field{
		{"hash", kindText, unsafe.Offsetof(rtm.Credentials{}.Hash), nil},
		{"token", kindText, unsafe.Offsetof(rtm.Credentials{}.Token), nil},
	}}
	empty         = table{}
	previousReply = table{fields: []field{
		{"position", kindText, unsafe.Offsetof(rtm.PreviousReply{}.Position), nil},
		{"previous", kindStructPtr, unsafe.Offsetof(rtm.PreviousReply{}.Previous), &previous},
	}}
	previousError = table{fields: []field{
		{"error", kindText, unsafe.Offsetof(rtm.PreviousError{}.Error), nil},
		{"reason", kindText, unsafe.Offsetof(rtm.PreviousError{}.Reason), nil},
		{"previous", kindStructPtr, unsafe.Offsetof(rtm.PreviousError{}.Previous), &previous},
	}}
	previous = table{fields: []field{
		{"message", kindMessage, unsafe.Offsetof(rtm.Previous{}.Message), nil},
		{"position", kindText, unsafe.Offsetof(rtm.Previous{}.Position), nil},
	}, alloc: func() unsafe.Pointer { return unsafe.Pointer(new(rtm.Previous)) }}
	presenceBody = table{fields: []field{
		{"channel", kindText, unsafe.Offsetof(rtm.PresenceBody{}.Channel), nil},
		{"after", kindText, unsafe.Offsetof(rtm.PresenceBody{}.After), nil},
		{"limit", kindInt, unsafe.Offsetof(rtm.PresenceBody{}.Limit), nil},
	}}
	presenceMember = table{fields: []field{
		{"user_id", kindText, unsafe.Offsetof(rtm.PresenceMember{}.UserID), nil},
		{"info", kindMessage, unsafe.Offsetof(rtm.PresenceMember{}.Info), nil},
		{"connections", kindInt, unsafe.Offsetof(rtm.PresenceMember{}.Connections), nil},
	}}
	presenceReply = table{fields: []field{
		{"users", kindInt, unsafe.Offsetof(rtm.PresenceReply{}.Users), nil},
		{"connections", kindInt, unsafe.Offsetof(rtm.PresenceReply{}.Connections), nil},
		{"members", kindMembers, unsafe.Offsetof(rtm.PresenceReply{}.Members), &presenceMember},
		{"next", kindText, unsafe.Offsetof(rtm.PresenceReply{}.Next), nil},
	}}
	subscriptionPresence = table{fields: []field{
		{"subscription_id", kindText, unsafe.Offsetof(rtm.SubscriptionPresence{}.SubscriptionID), nil},
		{"event", kindText, unsafe.Offsetof(rtm.SubscriptionPresence{}.Event), nil},
		{"members", kindMembers, unsafe.Offsetof(rtm.SubscriptionPresence{}.Members), &presenceMember},
		{"more", kindFlag, unsafe.Offsetof(rtm.SubscriptionPresence{}.More), nil},
		{"users", kindInt, unsafe.Offsetof(rtm.SubscriptionPresence{}.Users), nil},
		{"connections", kindInt, unsafe.Offsetof(rtm.SubscriptionPresence{}.Connections), nil},
	}}
)
