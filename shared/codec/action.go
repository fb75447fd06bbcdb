package codec

import "github.com/sluicehq/sluice/shared/rtm"

// actions maps every action of package rtm, requests and their replies, to
// itself, so Action can return a shared string instead of allocating one per
// decoded frame.
var actions = func() map[string]string {
	requests := []string{
		rtm.ActionPublish, rtm.ActionWrite, rtm.ActionDelete, rtm.ActionRead,
		rtm.ActionSubscribe, rtm.ActionUnsubscribe, rtm.ActionHandshake,
		rtm.ActionAuthenticate,
	}
	m := map[string]string{}
	for _, a := range requests {
		m[a] = a
		for _, o := range []string{rtm.OutcomeOK, rtm.OutcomeError} {
			r := rtm.Reply(a, o)
			m[r] = r
		}
	}
	for _, a := range []string{rtm.ActionSubscriptionData, rtm.ActionSubscriptionInfo, rtm.ActionSubscriptionErr, rtm.ActionError} {
		m[a] = a
	}
	return m
}()

// Action returns the action spelled by b. Known actions come back as shared
// constants without allocating; codecs call it when they decode a frame.
func Action(b []byte) string {
	if a, ok := actions[string(b)]; ok {
		return a
	}
	return string(b)
}
