package session

import (
	"context"
	"errors"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// What a client is told of a publish the log did not confirm. The
// journal says which of two it is (edge/journal's fate.go), and the
// reply says exactly what the client may rely on:
//
//   - not stored (store.ErrNotStored): nothing was written, and nothing
//     will be; publishing again is safe.
//   - fate unknown (store.ErrFateUnknown, or the request's deadline passed
//     while its publish was in flight): it may have been stored, once. The
//     edge goes on asking the log by the message's Msg-Id, and sends no
//     publish that comes after this reply (this connection's or any
//     other's on this edge) before the log answers, or before the
//     journal's resolve window ends. Those that wait past their own
//     deadline fail as not stored.
//
// Every request that waits for the log has one deadline, the log's
// publish timeout (cluster.publish_timeout), counted from when the edge
// starts serving it: its reads of the log and its publish share it.

// RequestContext returns the context of one request that waits for the
// log: its one deadline is the log's request window from now (none for
// a log that never waits).
func (e *Edge) RequestContext(parent context.Context) (context.Context, context.CancelFunc) {
	if d := e.ChanLog.Windows().Request; d > 0 {
		return context.WithTimeout(parent, d)
	}
	return context.WithCancel(parent)
}

// LogRefusal maps err, an append's that the channel log refused or did
// not confirm, to the client's error: the store's refusals as for a
// publish, else what the log did (logged, with what).
func (e *Edge) LogRefusal(err error, what string) *rtm.Error {
	if re, ok := rtm.AsError(AppendError(err)); ok {
		return re
	}
	if errors.Is(err, store.ErrClosed) {
		// The store refused it as the edge shuts down: nothing written.
		return rtm.Errorf(rtm.CodeUnavailable, "the edge is shutting down, so nothing was written; publish to another edge")
	}
	e.Logger.Warn(what+" not confirmed by the log", "err", err)
	w := e.ChanLog.Windows()
	switch {
	case errors.Is(err, store.ErrNotStored):
		return rtm.Errorf(rtm.CodeUnavailable, "the cluster's log did not store the message, and will not: publishing it again is safe")
	case errors.Is(err, store.ErrFateUnknown):
		return rtm.Errorf(rtm.CodeUnavailable, "the cluster's log did not answer within %v: the message may have been stored "+
			"(once) or not. This edge stores no publish sent after this reply before the log says which (it asks "+
			"for up to %v); one that waits past its own deadline fails as not stored",
			w.Request, w.Resolve)
	case errors.Is(err, chanlog.ErrUnreadable):
		return rtm.Errorf(rtm.CodeUnavailable, "the cluster's log cannot be read now, so nothing was written; try again")
	}
	return rtm.Errorf(rtm.CodeUnavailable, "the cluster's log did not confirm the message: it may have been stored; "+
		"read the channel to know")
}
