package codec

import "github.com/sluicehq/sluice/shared/rtm"

// requestActions are the actions of requests, each with its replies (by
// outcome: none, ok, error), and otherActions the rest of package rtm's:
// static data, so Action can return a shared string instead of allocating
// one per decoded frame. They replace a map built at init: the browser
// client runs every package's init before it can connect, and building
// the map ran Go's map code (allocation, growth, rehash), which V8
// compiles lazily, on first call, while the page waits.
var (
	requestActions = [...][3]string{
		{rtm.ActionPublish, rtm.ActionPublish + "/" + rtm.OutcomeOK, rtm.ActionPublish + "/" + rtm.OutcomeError},
		{rtm.ActionWrite, rtm.ActionWrite + "/" + rtm.OutcomeOK, rtm.ActionWrite + "/" + rtm.OutcomeError},
		{rtm.ActionDelete, rtm.ActionDelete + "/" + rtm.OutcomeOK, rtm.ActionDelete + "/" + rtm.OutcomeError},
		{rtm.ActionRead, rtm.ActionRead + "/" + rtm.OutcomeOK, rtm.ActionRead + "/" + rtm.OutcomeError},
		{rtm.ActionSubscribe, rtm.ActionSubscribe + "/" + rtm.OutcomeOK, rtm.ActionSubscribe + "/" + rtm.OutcomeError},
		{rtm.ActionUnsubscribe, rtm.ActionUnsubscribe + "/" + rtm.OutcomeOK, rtm.ActionUnsubscribe + "/" + rtm.OutcomeError},
		{rtm.ActionPresence, rtm.ActionPresence + "/" + rtm.OutcomeOK, rtm.ActionPresence + "/" + rtm.OutcomeError},
		{rtm.ActionHandshake, rtm.ActionHandshake + "/" + rtm.OutcomeOK, rtm.ActionHandshake + "/" + rtm.OutcomeError},
		{rtm.ActionAuthenticate, rtm.ActionAuthenticate + "/" + rtm.OutcomeOK, rtm.ActionAuthenticate + "/" + rtm.OutcomeError},
	}
	otherActions = [...]string{
		rtm.ActionSubscriptionData, rtm.ActionSubscriptionInfo, rtm.ActionSubscriptionErr,
		rtm.ActionSubscriptionPresence, rtm.ActionError,
	}
)

// Action returns the action spelled by b. Known actions come back as shared
// constants without allocating; codecs call it when they decode a frame.
// (string(b) in a comparison does not allocate.)
func Action(b []byte) string {
	base, outcome := b, 0
	if n := len(b); n > 3 && string(b[n-3:]) == "/"+rtm.OutcomeOK {
		base, outcome = b[:n-3], 1
	} else if n > 6 && string(b[n-6:]) == "/"+rtm.OutcomeError {
		base, outcome = b[:n-6], 2
	}
	for i := range requestActions {
		if requestActions[i][0] == string(base) {
			return requestActions[i][outcome]
		}
	}
	for _, a := range otherActions {
		if a == string(b) {
			return a
		}
	}
	return string(b)
}
