package journal

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A purge (RTM's rtm/delete with purge) drops a channel's history on
// every edge, in the log's order. The journal first publishes a purge
// marker on the channel's purge subject (sluice.<app>.<channel>.purge,
// which no channel's subject matches) whose payload is the channel's
// newest sequence, expecting it to be the newest still; every edge's
// feed applies the marker as a purge of its store up to that sequence
// (store.PurgeThrough), so positions stay those of one node: the marker
// takes a sequence of its own, a position up to the purged one is
// expired (the log is asked, PurgedThrough, where the store no longer
// holds it), and one past it reads on with the channel's next message.
// Then it purges the channel's messages up to that sequence from the
// stream (a subject-filtered JetStream purge).
//
// In that order, and not the other, because a feed lagging the stream
// loses the messages purged before it read them: the marker, after them
// in the stream, tells its subscribers they missed them (out of sync).
// Purged first, a message stored between the purge and the marker made
// the marker refused, and the messages purged were gone with no marker
// after them: a lagging edge's subscribers skipped them silently.
//
// Until the stream is purged, it still names the purged message as the
// channel's newest: a conditional publish (compare-and-set, or the
// previous message) may be stored after the marker on that condition,
// though the channel was purged before it. So once the stream is
// purged, a message of the channel after the marker makes the purge
// answer a mismatch, and the caller purges again, that message too: a
// message sent during a purge may be purged by it. An edge that stops
// between the marker and the stream's purge leaves the stores purged and
// the stream not (its reads of positions up to the purge say expired);
// the client, unanswered, purges again.

// purgeSuffix ends the subject of a channel's purge markers.
const purgeSuffix = ".purge"

// purgeSubject returns the subject of the purge markers of a store key.
func (j *Journal) purgeSubject(key string) string { return j.subject(key) + purgeSuffix }

// purgeKeyOf returns the store key whose purge subject subj is.
func (j *Journal) purgeKeyOf(subj string) (string, bool) {
	s, ok := strings.CutSuffix(subj, purgeSuffix)
	if !ok {
		return "", false
	}
	return j.keyOf(s)
}

// Purge drops the channel's messages up to sequence through (its newest,
// read by Latest) from every edge's store and from the stream, if it is
// still the channel's newest: done gets the purge marker's sequence once
// this edge's store is purged, or a *MismatchError if another message
// came first (nothing was purged) or was stored right after the marker
// (see above): read again and purge again. ctx's deadline, if before the
// publish timeout's, is the marker's.
func (j *Journal) Purge(ctx context.Context, key string, through uint64, msgID string, done func(seq uint64, err error)) {
	type result struct {
		seq uint64
		err error
	}
	marked := make(chan result, 1)
	x := pubExtra{cond: &condition{last: through, subject: j.subject(key)}, deadline: deadlineOf(ctx)}
	j.publish(j.purgeSubject(key), strconv.AppendUint(nil, through, 10), msgID, "", x,
		func(seq uint64, err error) { marked <- result{seq, err} })
	m := <-marked // a publish is answered by its deadline
	if m.err != nil {
		done(0, m.err)
		return
	}
	if j.purgeMarked != nil {
		j.purgeMarked()
	}
	if through > 0 {
		err := j.stream.Purge(ctx, jetstream.WithPurgeSubject(j.subject(key)), jetstream.WithPurgeSequence(through+1))
		if err != nil {
			done(0, fmt.Errorf("journal: purge %s up to %d: %w", j.subject(key), through, err))
			return
		}
	}
	f, _, found, err := j.Latest(ctx, key, 0)
	switch {
	case err != nil:
		done(0, fmt.Errorf("journal: after the purge of %s: %w", j.subject(key), err))
	case found && f.Offset > m.seq:
		done(0, &MismatchError{Last: f.Offset})
	default:
		done(m.seq, nil)
	}
}

// PurgedThrough returns the sequence up to which the channel was last
// purged (0: never, as far as the stream keeps its markers): positions
// up to it name purged messages. The stream's leader answers: a lagging
// copy may not hold the last marker yet, and a read of a purged position
// would then find the channel's next message as if it followed on.
func (j *Journal) PurgedThrough(ctx context.Context, key string) (uint64, error) {
	subj := j.purgeSubject(key)
	f, _, found, err := j.leaderGet(ctx, subj, &msgGetRequest{LastFor: subj})
	if err != nil || !found {
		return 0, err
	}
	n, err := strconv.ParseUint(string(f.Data), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("journal: purge marker of %s at %d: %w", j.subject(key), f.Offset, err)
	}
	return n, nil
}
