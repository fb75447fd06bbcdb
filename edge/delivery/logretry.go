package delivery

import (
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/edge/store"
)

// A subscription that must read its channel's history from the log (a
// catch-up, or a resume past a durable edge's store) while the log cannot
// be read ends "unavailable" at its position, and its client
// resubscribes there. A prefix subscription has no one position to give
// (each of its channels has its own), and its client could subscribe
// again only from now, losing what its other channels got meanwhile. So
// the channel of a prefix subscription that cannot read the log waits
// and tries again, keeping its place, while the others read on.

// Bounds of the pause before a prefix subscription's channel reads the
// log again: it doubles from the first to the second. maxLogWait bounds
// a streak of failures, past which the prefix subscription ends
// "unavailable" as a plain one does: the channel's cursor, fallen behind
// the store, keeps the blocks it has not read in memory (store_bytes does
// not count them) as long as the channel goes on, and each try holds the
// connection's writer for as long as a log read may take.
const (
	minLogRetry = 100 * time.Millisecond
	maxLogRetry = 5 * time.Second
	maxLogWait  = time.Minute
)

// logRetry is a prefix subscription's channel that failed to read the
// log: its streak of failures, and the try it waits for. The writer's.
type logRetry struct {
	since time.Time     // the streak's first failure
	pause time.Duration // the last pause
	at    time.Time     // when it tries again; zero while a try runs
	// oos is where to resume from the log (resume); nil: its catch-up
	// reads on where it was.
	oos *store.OutOfSyncError
}

// retryLater has sub, a prefix subscription or one of its channels,
// whose history the log could not give (err), try again after a pause:
// resume at oos, or (nil) read its catch-up on. Past maxLogWait of
// failures it ends "unavailable" instead. The group's timer wakes the
// writer when it is due (armOwn).
func (c *Conn) retryLater(w *writer, sub *Subscription, err error, oos *store.OutOfSyncError) error {
	now := time.Now()
	r := sub.retry
	if r == nil {
		r = &logRetry{since: now}
		sub.retry = r
	}
	if now.Sub(r.since) >= maxLogWait {
		sub.retry = nil
		pos := sub.Position()
		if oos != nil {
			pos = oos.Position
		}
		return c.endUnavailable(w, sub, pos, err)
	}
	first := r.pause == 0
	r.pause = min(max(2*r.pause, minLogRetry), maxLogRetry)
	r.at, r.oos = now.Add(r.pause), oos
	c.eng.counters.LogRetries.Add(1)
	// Once a streak, not once a try: an outage of the log would otherwise
	// log every waiting channel of every connection every 5 s.
	level := slog.LevelDebug
	if first {
		level = slog.LevelWarn
	}
	c.eng.log.Log(c.ctx, level, "reading a prefix subscription's channel from the log failed; trying again",
		"remote", c.remote, "subscription", sub.ID, "channel", sub.Channel, "in", r.pause, "err", err)
	return nil
}

// retryDue tries sub again if it waits to read the log and is due: it
// resumes from the log where it should, or reports on (true) to read its
// catch-up on. Not due, it reports false. A try may hold the writer for
// as long as a log read may take, so a pass makes one, and the reader's
// none (the reader would stop reading its client): the rest wait for the
// next pass (armOwn), the other subscriptions and replies between.
func (c *Conn) retryDue(w *writer, sub *Subscription) (on bool, _ error) {
	r := sub.retry
	switch {
	case r.at.IsZero():
		return true, nil // not waiting: a streak read on from
	case w.reader || w.logTried || time.Now().Before(r.at):
		return false, nil
	}
	w.logTried = true
	r.at = time.Time{}
	if oos := r.oos; oos != nil {
		r.oos = nil
		return false, c.outOfSync(w, sub, oos)
	}
	return true, nil
}

// prefixGroup is the group of sub, a prefix subscription or one of its
// channels.
func (s *Subscription) prefixGroup() *prefixGroup {
	if s.group != nil {
		return s.group
	}
	return s.of.group
}
