package journal

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Dead man's switches in the log: a publish that arms one (RTM's ttl and
// ttl_message) carries it in SwitchHeader, so that every edge's feed
// learns of it, the edge that armed it included once restarted. The
// server keeps its own switches as timers; the feed's announcements let
// another edge fire a switch whose edge is gone (a crash, a deploy), and
// a restarted edge fire those armed before it stopped. Whoever fires, the
// message is a conditional publish at the arming message's sequence, so
// it is stored once at most, and not at all if anything else was
// published on the channel meanwhile.
//
// A switch is armed exactly while its message is its channel's last, so
// a restarted journal finds them all without reading the whole stream:
// the replay brings those of its window, and recoverSwitches reads the
// last message of every channel for the older ones (a ttl longer than
// the window, and every edge restarted, as a durable single node's
// deploy does).

// SwitchHeader is the NATS header of a message that arms a dead man's
// switch: "SECONDS BASE64", the ttl in seconds and the ttl_message as
// the edge encodes a publish's message (binary for msgpack, hence the
// base64: a header is text).
const SwitchHeader = "Sluice-Switch"

// maxSwitchTTL bounds the ttl a switch header may carry: the edge arms
// switches of a day at most, and a larger value would overflow a
// time.Duration.
const maxSwitchTTL = 7 * 24 * 60 * 60

// SwitchFunc is told of a switch in the log: the message at offset of
// the channel key, stored at stored, armed a switch of ttl seconds that
// publishes message. replayed says it was stored before the journal
// opened (a restart's replay, or recoverSwitches), and stored is then on
// this process's clock (the stream leader's, corrected by the skew
// measured at Start); else it is the leader's, as stored. It runs on the
// feed's goroutine, or recoverSwitches', and must not block; message is
// its own.
type SwitchFunc = func(key string, offset uint64, stored time.Time, ttl int64, message []byte, replayed bool)

// OnSwitch sets the function the journal tells of the switches in the
// log: those the feed applies, and those recoverSwitches finds. Set it
// before Start: the replay after a restart brings the switches
// armed within Options.Replay, recoverSwitches (which Start starts) those
// armed before.
func (j *Journal) OnSwitch(f SwitchFunc) { j.switchFn.Store(&f) }

// PublishArming is PublishFrom of a message that arms a dead man's
// switch of ttl seconds publishing ttlMessage: the log keeps the switch
// with the message (SwitchHeader) for every edge's OnSwitch. ctx's
// deadline, if before the publish timeout's, is the publish's.
func (j *Journal) PublishArming(ctx context.Context, key string, payload []byte, origin string, ttl int64, ttlMessage []byte, done func(seq uint64, err error)) {
	j.publish(j.subject(key), payload, "", origin, pubExtra{sw: armed(ttl, ttlMessage), deadline: deadlineOf(ctx)}, done)
}

// deadSwitch is the switch a publish arms.
type deadSwitch struct {
	ttl     int64
	message []byte
}

// armed returns the switch of ttl seconds publishing message, nil if ttl
// is not above 0 (no switch).
func armed(ttl int64, message []byte) *deadSwitch {
	if ttl <= 0 {
		return nil
	}
	return &deadSwitch{ttl: ttl, message: message}
}

// set writes the switch into a publish's headers.
func (sw *deadSwitch) set(h nats.Header) {
	h[SwitchHeader] = []string{strconv.FormatInt(sw.ttl, 10) + " " + base64.StdEncoding.EncodeToString(sw.message)}
}

// parseSwitch reads a SwitchHeader value.
func parseSwitch(v string) (ttl int64, message []byte, ok bool) {
	secs, msg, found := strings.Cut(v, " ")
	if !found {
		return 0, nil, false
	}
	ttl, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || ttl <= 0 || ttl > maxSwitchTTL {
		return 0, nil, false
	}
	if message, err = base64.StdEncoding.DecodeString(msg); err != nil {
		return 0, nil, false
	}
	return ttl, message, true
}

// announceSwitch tells the OnSwitch function of the switch the message at
// seq on subj carries in v, if any; replayed: stored before the journal
// opened.
func (j *Journal) announceSwitch(seq uint64, subj string, stored time.Time, v string, replayed bool) {
	fn := j.switchFn.Load()
	if fn == nil {
		return
	}
	key, ok := j.keyOf(subj)
	if !ok {
		return
	}
	ttl, message, ok := parseSwitch(v)
	if !ok {
		j.log.Warn("journal: a message with a switch header that does not parse", "subject", subj, "seq", seq)
		return
	}
	if replayed {
		stored = stored.Add(-j.skew)
	}
	(*fn)(key, seq, stored, ttl, message, replayed)
}

// recoverSwitches announces the switches armed before the replay, which
// starts at from: those of the channels whose last message is older than
// from and arms one. One consumer reads the channels' last messages,
// headers only (the switch is in one), oldest first, and stops at from;
// it runs on the journal's goroutines after Start, and reads again from
// the start if the log fails it (an announcement made twice arms one
// standby), until the journal closes or loses its stream. first is the
// stream's first sequence: a replay from there leaves nothing older.
func (j *Journal) recoverSwitches(from, first uint64) {
	if j.switchFn.Load() == nil || from <= max(first, 1) {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // ends with ctx: the journal's close, or this return
		select {
		case <-j.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		start := time.Now()
		n, err := j.scanSwitches(ctx, from)
		if err == nil {
			j.log.Info("journal: switches armed before the replay recovered", "stream", j.opts.Stream,
				"switches", n, "before_seq", from, "took", time.Since(start).Round(time.Millisecond))
			return
		}
		if ctx.Err() != nil || j.Lost() != nil {
			return
		}
		j.log.Warn("journal: recovering the switches armed before the replay; trying again", "stream", j.opts.Stream, "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// scanBatch is how many last messages one fetch of scanSwitches asks for.
const scanBatch = 512

// scanSwitches is one pass of recoverSwitches: it returns how many
// switches it announced.
func (j *Journal) scanSwitches(ctx context.Context, from uint64) (int, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	cons, err := j.stream.CreateConsumer(cctx, jetstream.ConsumerConfig{
		DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
		AckPolicy:     jetstream.AckNonePolicy,
		FilterSubject: j.prefix + "*.*", // a channel's messages, not its purge markers
		HeadersOnly:   true,
		// The log forgets it if this edge goes before deleting it.
		InactiveThreshold: time.Minute,
		MemoryStorage:     true,
		Replicas:          1,
	})
	cancel()
	if err != nil {
		return 0, fmt.Errorf("journal: create a consumer of the channels' last messages: %w", err)
	}
	defer func() {
		if ctx.Err() != nil {
			return // closing: InactiveThreshold deletes it
		}
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := j.stream.DeleteConsumer(dctx, cons.CachedInfo().Name); err != nil {
			j.log.Debug("journal: delete the consumer of the channels' last messages (it goes when idle)", "err", err)
		}
	}()
	// A fetch is answered when its batch is full (or it expires): ask for
	// no more than are pending.
	pending, n := cons.CachedInfo().NumPending, 0
	for pending > 0 {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		batch, err := cons.Fetch(int(min(pending, scanBatch)), jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			return n, fmt.Errorf("journal: fetch the channels' last messages: %w", err)
		}
		got, done := 0, false
		var bad error
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				bad = err
			}
			if bad != nil || done {
				continue // drain the batch
			}
			if seq := md.Sequence.Stream; seq >= from {
				done = true // the replay's, and what follows
			} else if v := m.Headers().Get(SwitchHeader); v != "" {
				j.announceSwitch(seq, m.Subject(), md.Timestamp, v, true)
				n++
			}
			pending = md.NumPending
		}
		err = batch.Error()
		cancel()
		switch {
		case bad != nil:
			return n, fmt.Errorf("journal: a last message without metadata: %w", bad)
		case errors.Is(err, context.DeadlineExceeded) && got > 0 && ctx.Err() == nil:
			// Answered, if not in full: ask again.
		case err != nil:
			// Unanswered (JetStream answers a short batch before the
			// deadline): read again, or the rest is never announced.
			return n, fmt.Errorf("journal: fetch the channels' last messages: %w", err)
		}
		if done {
			break
		}
		if got == 0 {
			// Answered with nothing: only right if nothing is left.
			info, err := cons.Info(ctx)
			if err != nil {
				return n, fmt.Errorf("journal: ask the consumer of the channels' last messages: %w", err)
			}
			if info.NumPending > 0 {
				return n, fmt.Errorf("journal: the consumer of the channels' last messages sent none of %d pending", info.NumPending)
			}
			break
		}
	}
	return n, nil
}
