// Package codectest holds the behaviour every codec of package codec must
// show, as test, fuzz and benchmark bodies that each codec's tests run
// against itself. It is imported only by tests.
package codectest

import (
	"math"

	"github.com/sluicehq/sluice/shared/rtm"
)

// BodyType makes empty values of one body type for DecodeBody, and turns
// a decoded one into the Body of a PDU.
type BodyType struct {
	Name string
	New  func() any
	// Body returns what to put in rtm.PDU.Body for a value from New.
	Body func(v any) any
}

func ptrType[T any](name string) BodyType {
	return BodyType{Name: name, New: func() any { return new(T) }, Body: func(v any) any { return v }}
}

// BodyTypes lists every body type of package rtm, and a generic map.
var BodyTypes = []BodyType{
	ptrType[rtm.PublishBody]("PublishBody"),
	ptrType[rtm.ChannelBody]("ChannelBody"),
	ptrType[rtm.PositionBody]("PositionBody"),
	ptrType[rtm.ReadBody]("ReadBody"),
	ptrType[rtm.ReadReply]("ReadReply"),
	ptrType[rtm.SubscribeBody]("SubscribeBody"),
	ptrType[rtm.SubscribeReply]("SubscribeReply"),
	ptrType[rtm.UnsubscribeBody]("UnsubscribeBody"),
	ptrType[rtm.UnsubscribeReply]("UnsubscribeReply"),
	ptrType[rtm.SubscriptionData]("SubscriptionData"),
	ptrType[rtm.SubscriptionInfo]("SubscriptionInfo"),
	ptrType[rtm.SubscriptionError]("SubscriptionError"),
	ptrType[rtm.ErrorBody]("ErrorBody"),
	ptrType[rtm.HandshakeBody]("HandshakeBody"),
	ptrType[rtm.HandshakeReply]("HandshakeReply"),
	ptrType[rtm.AuthenticateBody]("AuthenticateBody"),
	ptrType[rtm.Empty]("Empty"),
	ptrType[rtm.PreviousReply]("PreviousReply"),
	ptrType[rtm.PreviousError]("PreviousError"),
	ptrType[rtm.PresenceBody]("PresenceBody"),
	ptrType[rtm.PresenceReply]("PresenceReply"),
	ptrType[rtm.SubscriptionPresence]("SubscriptionPresence"),
	{
		Name: "map",
		New:  func() any { return new(map[string]any) },
		Body: func(v any) any { return *v.(*map[string]any) },
	},
}

func i64(n int64) *int64 { return &n }

// Message is a typical small JSON-object message.
func Message() map[string]any {
	return map[string]any{"text": "hello, world", "user": "alice", "n": int64(42), "ok": true}
}

// PDU is one sample request, reply or push with every field set.
type PDU struct {
	Name   string
	Action string
	Body   any
}

// SamplePDUs covers every body type with all its fields set, so a round
// trip shows that no field is lost or renamed.
func SamplePDUs() []PDU {
	return []PDU{
		{"publish", rtm.ActionPublish, &rtm.PublishBody{Channel: "chat", Message: Message()}},
		{"publish excluding its connection", rtm.ActionPublish, &rtm.PublishBody{Channel: "chat", Message: Message(), ExcludeSelf: true}},
		{"write with options", rtm.ActionWrite, &rtm.PublishBody{Channel: "kv", Message: Message(), Position: "1:2",
			TTL: i64(30), TTLMessage: map[string]any{"gone": true}, Read: rtm.ReadPreviousOnError}},
		{"delete", rtm.ActionDelete, &rtm.ChannelBody{Channel: "chat", Purge: true, Read: rtm.ReadPrevious}},
		{"write ok with previous", rtm.Reply(rtm.ActionWrite, rtm.OutcomeOK), &rtm.PreviousReply{Position: "1:3",
			Previous: &rtm.Previous{Message: Message(), Position: "1:2"}}},
		{"write error with previous", rtm.Reply(rtm.ActionWrite, rtm.OutcomeError), &rtm.PreviousError{
			Error: string(rtm.CodePositionMismatch), Reason: "moved on", Previous: &rtm.Previous{Message: []any{"x"}, Position: "1:4"}}},
		{"publish ok", rtm.Reply(rtm.ActionPublish, rtm.OutcomeOK), &rtm.PositionBody{Position: "1:2"}},
		{"read", rtm.ActionRead, &rtm.ReadBody{Channel: "chat", Position: "3:4"}},
		{"read ok", rtm.Reply(rtm.ActionRead, rtm.OutcomeOK), &rtm.ReadReply{Position: "3:4", Message: []any{int64(1), "x", nil}}},
		{"subscribe", rtm.ActionSubscribe, &rtm.SubscribeBody{
			Channel: "chat", SubscriptionID: "s1", Position: "5:6",
			History:     &rtm.History{Count: i64(20), Age: i64(3600)},
			FastForward: true, Force: true, Filter: "SELECT * FROM chat", Period: 10, Batch: 1,
			Only: rtm.OnlyValueChanges, Prefix: true, Presence: true,
		}},
		{"subscribe ok", rtm.Reply(rtm.ActionSubscribe, rtm.OutcomeOK), &rtm.SubscribeReply{Position: "5:6", SubscriptionID: "s1"}},
		{"unsubscribe", rtm.ActionUnsubscribe, &rtm.UnsubscribeBody{SubscriptionID: "s1"}},
		{"unsubscribe ok", rtm.Reply(rtm.ActionUnsubscribe, rtm.OutcomeOK), &rtm.UnsubscribeReply{Position: "5:9", SubscriptionID: "s1"}},
		{"data", rtm.ActionSubscriptionData, &rtm.SubscriptionData{SubscriptionID: "s1", Position: "5:10", Messages: []any{Message(), "two", int64(3)}}},
		{"data of a prefix subscription", rtm.ActionSubscriptionData, &rtm.SubscriptionData{SubscriptionID: "s1", Channel: "news.a",
			Position: "5:11", Messages: []any{"one"}}},
		{"info", rtm.ActionSubscriptionInfo, &rtm.SubscriptionInfo{
			Info: rtm.InfoFastForward, Reason: "skipped", Position: "5:20", SubscriptionID: "s1", MissedMessageCount: math.MaxUint64,
		}},
		{"subscription error", rtm.ActionSubscriptionErr, &rtm.SubscriptionError{
			Error: string(rtm.CodeOutOfSync), Reason: "too slow", Position: "5:20", SubscriptionID: "s1", MissedMessageCount: 7,
		}},
		{"error", rtm.Reply(rtm.ActionPublish, rtm.OutcomeError), &rtm.ErrorBody{
			Error: string(rtm.CodeExpiredPosition), Reason: "gone", Position: "1:1", SubscriptionID: "s1",
		}},
		{"handshake", rtm.ActionHandshake, &rtm.HandshakeBody{Method: rtm.MethodRoleSecret, Data: rtm.HandshakeData{Role: "admin"}}},
		{"handshake ok", rtm.Reply(rtm.ActionHandshake, rtm.OutcomeOK), &rtm.HandshakeReply{Data: rtm.NonceData{Nonce: "n0nce"}}},
		{"authenticate", rtm.ActionAuthenticate, &rtm.AuthenticateBody{
			Method: rtm.MethodRoleSecret, Credentials: rtm.Credentials{Hash: "G12A8Dt0RdjHNx8P0lci9w==", Token: "t"},
		}},
		{"authenticate ok", rtm.Reply(rtm.ActionAuthenticate, rtm.OutcomeOK), &rtm.Empty{}},
		{"presence", rtm.ActionPresence, &rtm.PresenceBody{Channel: "chat", After: "ann", Limit: 50}},
		{"presence ok", rtm.Reply(rtm.ActionPresence, rtm.OutcomeOK), &rtm.PresenceReply{
			Users: 2, Connections: 3, Next: "bob",
			Members: []rtm.PresenceMember{{UserID: "ann", Info: Message(), Connections: 2}, {UserID: "bob", Connections: 1}},
		}},
		{"presence push", rtm.ActionSubscriptionPresence, &rtm.SubscriptionPresence{
			SubscriptionID: "s1", Event: rtm.PresenceMembers, More: true, Users: 2, Connections: 3,
			Members: []rtm.PresenceMember{{UserID: "ann", Info: "Ann", Connections: 2}},
		}},
	}
}

// Deep returns a value of n arrays nested in one another around a string.
func Deep(n int) any {
	var v any = "core"
	for range n {
		v = []any{v}
	}
	return v
}
