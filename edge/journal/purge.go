package journal

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A purge (RTM's rtm/delete with purge) drops a channel's history on
// every edge, in the log's order: the journal purges the channel's
// messages up to a sequence from the stream (a subject-filtered
// JetStream purge), then publishes a purge marker on the channel's purge
// subject (sluice.<app>.<channel>.purge, which no channel's subject
// matches) whose payload is that sequence, expecting the channel to have
// no message left: none came after the one purged. Every edge's feed
// applies the marker
// as a purge of its store, so positions stay those of one node: the
// marker takes a sequence of its own, a position up to the purged one is
// expired (the log is asked, PurgedThrough, where the store no longer
// holds it), and one past it reads on with the channel's next message.
// An edge that stops between the two steps leaves the stream purged and
// the stores not; the client, unanswered, purges again.

// purgeSuffix ends the subject of a channel's purge markers.
const purgeSuffix = ".purge"

// purgeSubject returns the subject of the purge markers of a store key.
func purgeSubject(key string) string { return Subject(key) + purgeSuffix }

// purgeKeyOf returns the store key whose purge subject subj is.
func purgeKeyOf(subj string) (string, bool) {
	s, ok := strings.CutSuffix(subj, purgeSuffix)
	if !ok {
		return "", false
	}
	return keyOf(s)
}

// Purge drops the channel's messages up to sequence through (its newest,
// read by Latest) from the stream and every edge's store, if it is still
// the channel's newest: done gets the purge marker's sequence once this
// edge's store is purged, or a *MismatchError if another message came
// first (nothing more is purged from the stores; read again and purge
// again).
func (j *Journal) Purge(ctx context.Context, key string, through uint64, msgID string, done func(seq uint64, err error)) {
	if through > 0 {
		err := j.stream.Purge(ctx, jetstream.WithPurgeSubject(Subject(key)), jetstream.WithPurgeSequence(through+1))
		if err != nil {
			done(0, fmt.Errorf("journal: purge %s up to %d: %w", Subject(key), through, err))
			return
		}
	}
	// Purged, the channel has no message: unless another came since.
	j.publishTo(purgeSubject(key), Subject(key), strconv.AppendUint(nil, through, 10), msgID, 0, done)
}

// PurgedThrough returns the sequence up to which the channel was last
// purged (0: never, as far as the stream keeps its markers): positions up
// to it name purged messages.
func (j *Journal) PurgedThrough(ctx context.Context, key string) (uint64, error) {
	fs, _, err := j.get(ctx, &getRequest{MultiLastFor: []string{purgeSubject(key)}, Batch: 1})
	if err != nil || len(fs) == 0 {
		return 0, err
	}
	n, err := strconv.ParseUint(string(fs[0].Data), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("journal: purge marker of %s at %d: %w", Subject(key), fs[0].Offset, err)
	}
	return n, nil
}
