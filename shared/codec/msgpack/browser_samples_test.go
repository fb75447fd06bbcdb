package msgpack_test

import (
	"math"
	"strings"

	"github.com/sluicehq/sluice/shared/rtm"
)

func i64(n int64) *int64 { return &n }

// richMessage is a value with every kind of the data model.
func richMessage() map[string]any {
	return map[string]any{
		"text":   "héllo, 世界 🌊",
		"n":      int64(42),
		"neg":    int64(-70000),
		"big":    int64(1) << 60,
		"huge":   uint64(math.MaxUint64),
		"min":    int64(math.MinInt64),
		"f":      3.25,
		"ok":     true,
		"no":     false,
		"none":   nil,
		"bin":    []byte{0, 1, 2, 255},
		"list":   []any{int64(1), "two", []any{}, map[string]any{}},
		"nested": map[string]any{"a": map[string]any{"b": []any{nil, 1.5}}},
		"long":   strings.Repeat("x", 70000),
	}
}

// sample is a PDU the browser sends or receives and a constructor of its
// body type.
type sample struct {
	name string
	pdu  rtm.PDU
	body func() any
}

// sent reports whether the client sends this PDU (a request: no outcome
// in its action), rather than receives it.
func (s sample) sent() bool {
	return strings.Count(s.pdu.Action, "/") == 1 && !strings.HasPrefix(s.pdu.Action, "x/")
}

// browserSamples covers every body type the client sends or receives, with its
// fields set.
func browserSamples() []sample {
	return []sample{
		{"publish", rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(1), Body: &rtm.PublishBody{Channel: "chat", Message: richMessage()}}, func() any { return new(rtm.PublishBody) }},
		{"publish excluding self", rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(1), Body: &rtm.PublishBody{Channel: "chat", Message: richMessage(), ExcludeSelf: true}}, func() any { return new(rtm.PublishBody) }},
		{"delete", rtm.PDU{Action: rtm.ActionDelete, ID: rtm.IntID(2), Body: &rtm.ChannelBody{Channel: "chat"}}, func() any { return new(rtm.ChannelBody) }},
		{"write with options", rtm.PDU{Action: rtm.ActionWrite, ID: rtm.IntID(1), Body: &rtm.PublishBody{Channel: "kv", Message: richMessage(),
			Position: "1:2", TTL: i64(30), TTLMessage: "gone", Read: rtm.ReadPreviousOnError}}, func() any { return new(rtm.PublishBody) }},
		{"write with a ttl of 0", rtm.PDU{Action: rtm.ActionWrite, ID: rtm.IntID(1), Body: &rtm.PublishBody{Channel: "kv", Message: "v",
			TTL: i64(0)}}, func() any { return new(rtm.PublishBody) }},
		{"delete with purge", rtm.PDU{Action: rtm.ActionDelete, ID: rtm.IntID(2), Body: &rtm.ChannelBody{Channel: "chat", Purge: true, Read: rtm.ReadPrevious}}, func() any { return new(rtm.ChannelBody) }},
		{"write ok with previous", rtm.PDU{Action: "rtm/write/ok", ID: rtm.IntID(3), Body: &rtm.PreviousReply{Position: "1:3",
			Previous: &rtm.Previous{Message: richMessage(), Position: "1:2"}}}, func() any { return new(rtm.PreviousReply) }},
		{"purge ok with previous", rtm.PDU{Action: "rtm/delete/ok", ID: rtm.IntID(3), Body: &rtm.PreviousReply{
			Previous: &rtm.Previous{Message: nil, Position: "0:0"}}}, func() any { return new(rtm.PreviousReply) }},
		{"write error with previous", rtm.PDU{Action: "rtm/write/error", ID: rtm.IntID(3), Body: &rtm.PreviousError{Error: "position_mismatch",
			Reason: "moved on", Previous: &rtm.Previous{Message: []any{"x"}, Position: "1:4"}}}, func() any { return new(rtm.PreviousError) }},
		{"publish ok", rtm.PDU{Action: "rtm/publish/ok", ID: rtm.IntID(3), Body: &rtm.PositionBody{Position: "1:2"}}, func() any { return new(rtm.PositionBody) }},
		{"read", rtm.PDU{Action: rtm.ActionRead, ID: rtm.IntID(4), Body: &rtm.ReadBody{Channel: "chat", Position: "3:4"}}, func() any { return new(rtm.ReadBody) }},
		{"read newest", rtm.PDU{Action: rtm.ActionRead, ID: rtm.IntID(4), Body: &rtm.ReadBody{Channel: "chat"}}, func() any { return new(rtm.ReadBody) }},
		{"read ok", rtm.PDU{Action: "rtm/read/ok", ID: rtm.IntID(5), Body: &rtm.ReadReply{Position: "3:4", Message: []any{int64(1), "x", nil}}}, func() any { return new(rtm.ReadReply) }},
		{"subscribe", rtm.PDU{Action: rtm.ActionSubscribe, ID: rtm.IntID(6), Body: &rtm.SubscribeBody{
			Channel: "chat", SubscriptionID: "s1", Position: "5:6",
			History:     &rtm.History{Count: i64(20), Age: i64(3600)},
			FastForward: true, Force: true, Filter: "SELECT * FROM chat", Period: 10, Batch: 5, Only: rtm.OnlyValueChanges, Prefix: true,
		}}, func() any { return new(rtm.SubscribeBody) }},
		{"subscribe minimal", rtm.PDU{Action: rtm.ActionSubscribe, ID: rtm.IntID(7), Body: &rtm.SubscribeBody{Channel: "c"}}, func() any { return new(rtm.SubscribeBody) }},
		{"subscribe ok", rtm.PDU{Action: "rtm/subscribe/ok", ID: rtm.IntID(8), Body: &rtm.SubscribeReply{Position: "5:6", SubscriptionID: "s1"}}, func() any { return new(rtm.SubscribeReply) }},
		{"unsubscribe", rtm.PDU{Action: rtm.ActionUnsubscribe, ID: rtm.IntID(9), Body: &rtm.UnsubscribeBody{SubscriptionID: "s1"}}, func() any { return new(rtm.UnsubscribeBody) }},
		{"unsubscribe ok", rtm.PDU{Action: "rtm/unsubscribe/ok", ID: rtm.IntID(10), Body: &rtm.UnsubscribeReply{Position: "5:9", SubscriptionID: "s1"}}, func() any { return new(rtm.UnsubscribeReply) }},
		{"data", rtm.PDU{Action: rtm.ActionSubscriptionData, Body: &rtm.SubscriptionData{SubscriptionID: "s1", Position: "5:10", Messages: []any{richMessage(), "two", int64(3)}}}, func() any { return new(rtm.SubscriptionData) }},
		{"data of a prefix subscription", rtm.PDU{Action: rtm.ActionSubscriptionData, Body: &rtm.SubscriptionData{SubscriptionID: "s1", Channel: "news.a",
			Position: "5:11", Messages: []any{richMessage()}}}, func() any { return new(rtm.SubscriptionData) }},
		{"info", rtm.PDU{Action: rtm.ActionSubscriptionInfo, Body: &rtm.SubscriptionInfo{
			Info: rtm.InfoFastForward, Reason: "skipped", Position: "5:20", SubscriptionID: "s1", MissedMessageCount: math.MaxUint64,
		}}, func() any { return new(rtm.SubscriptionInfo) }},
		{"subscription error", rtm.PDU{Action: rtm.ActionSubscriptionErr, Body: &rtm.SubscriptionError{
			Error: "out_of_sync", Reason: "too slow", Position: "5:20", SubscriptionID: "s1", MissedMessageCount: 7,
		}}, func() any { return new(rtm.SubscriptionError) }},
		{"error", rtm.PDU{Action: "rtm/publish/error", ID: rtm.StringID("x7"), Body: &rtm.ErrorBody{
			Error: "expired_position", Reason: "gone", Position: "1:1", SubscriptionID: "s1",
		}}, func() any { return new(rtm.ErrorBody) }},
		{"handshake", rtm.PDU{Action: rtm.ActionHandshake, ID: rtm.IntID(11), Body: &rtm.HandshakeBody{Method: rtm.MethodRoleSecret, Data: rtm.HandshakeData{Role: "admin"}}}, func() any { return new(rtm.HandshakeBody) }},
		{"handshake ok", rtm.PDU{Action: "auth/handshake/ok", ID: rtm.IntID(12), Body: &rtm.HandshakeReply{Data: rtm.NonceData{Nonce: "n0nce"}}}, func() any { return new(rtm.HandshakeReply) }},
		{"authenticate", rtm.PDU{Action: rtm.ActionAuthenticate, ID: rtm.IntID(-13), Body: &rtm.AuthenticateBody{
			Method: rtm.MethodJWT, Credentials: rtm.Credentials{Token: "a.b.c"},
		}}, func() any { return new(rtm.AuthenticateBody) }},
		{"authenticate ok", rtm.PDU{Action: "auth/authenticate/ok", ID: rtm.IntID(14), Body: &rtm.Empty{}}, func() any { return new(map[string]any) }},
		{"no body", rtm.PDU{Action: "auth/authenticate/ok", ID: rtm.IntID(15)}, func() any { return new(map[string]any) }},
		{"subscribe presence", rtm.PDU{Action: rtm.ActionSubscribe, ID: rtm.IntID(16), Body: &rtm.SubscribeBody{Channel: "c", Presence: true}}, func() any { return new(rtm.SubscribeBody) }},
		{"presence", rtm.PDU{Action: rtm.ActionPresence, ID: rtm.IntID(17), Body: &rtm.PresenceBody{Channel: "c", After: "ann", Limit: 50}}, func() any { return new(rtm.PresenceBody) }},
		{"presence minimal", rtm.PDU{Action: rtm.ActionPresence, ID: rtm.IntID(18), Body: &rtm.PresenceBody{Channel: "c"}}, func() any { return new(rtm.PresenceBody) }},
		{"presence ok", rtm.PDU{Action: "rtm/presence/ok", ID: rtm.IntID(19), Body: &rtm.PresenceReply{
			Users: 2, Connections: 3, Next: "bob",
			Members: []rtm.PresenceMember{{UserID: "ann", Info: richMessage(), Connections: 2}, {UserID: "bob", Connections: 1}},
		}}, func() any { return new(rtm.PresenceReply) }},
		{"presence push", rtm.PDU{Action: rtm.ActionSubscriptionPresence, Body: &rtm.SubscriptionPresence{
			SubscriptionID: "s1", Event: rtm.PresenceMembers, More: true, Users: 1 << 40, Connections: 3,
			Members: []rtm.PresenceMember{{UserID: "ann", Info: "Ann"}},
		}}, func() any { return new(rtm.SubscriptionPresence) }},
		{"map body", rtm.PDU{Action: "x/y", Body: map[string]any{"k": []any{"v"}}}, func() any { return new(map[string]any) }},
	}
}
