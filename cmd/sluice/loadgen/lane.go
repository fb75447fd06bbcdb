package loadgen

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"
)

// lane is one sequential stream of publishes under one publisher id. A
// publishing connection has Config.Inflight lanes, each waiting for its
// own acknowledgments, so that the connection has that many publishes
// outstanding while every lane's messages stay in order. Its fields are
// the lane goroutine's, except published and gate.made, read by the
// reporter, and gate.delivered.
type lane struct {
	id       uint16
	conn     Conn
	channels []int    // channel indexes, published to round-robin
	fanout   []int    // subscribers of each channel (parallel to channels)
	seqs     []uint64 // messages stored on each channel (parallel to channels)
	// unsure lists, per channel (parallel to channels), the sequence
	// numbers of messages whose publish has no known outcome: sent, then
	// the connection dropped or no acknowledgment came. Counted in seqs,
	// but not owed: the server may or may not have stored them.
	unsure [][]uint64
	// gate is made with the lane, so that the reporter may read its
	// deliveries any time; setFanout sizes it.
	gate     *gate
	interval time.Duration // between publishes at a fixed rate; 0 for max
	offset   time.Duration // before the first publish at a fixed rate
	buf      []byte
	sent     time.Duration // when the message in flight was stamped
	async    asyncState    // the lane's state when it publishes asynchronously

	published atomic.Uint64 // messages stored (acknowledged or sent)
}

// setFanout records how many subscribers each of the lane's channels got
// and sizes the flow-control window accordingly.
func (l *lane) setFanout(window int, subsPerChannel []int) {
	l.fanout = make([]int, len(l.channels))
	total := 0
	for i, c := range l.channels {
		l.fanout[i] = subsPerChannel[c]
		total += l.fanout[i]
	}
	avg := int(math.Ceil(float64(total) / float64(len(l.channels))))
	l.gate.size(window, avg)
}

// storedOn returns how many messages the lane stored on a channel, and
// the sequence numbers among them whose publish has no known outcome.
func (l *lane) storedOn(channel int) (uint64, []uint64) {
	for i, c := range l.channels {
		if c == channel {
			var unsure []uint64
			if l.unsure != nil {
				unsure = l.unsure[i]
			}
			return l.seqs[i], unsure
		}
	}
	return 0, nil
}

// run publishes until ctx ends. Each synchronous publish runs under pctx
// instead, which ends later, and an asynchronous one gets the drain time
// after ctx ended (publishAsync): a publish in flight when the lane stops
// completes, so whether its message was stored is known.
func (l *lane) run(ctx, pctx context.Context, r *run) {
	ap, async := l.conn.(AsyncPublisher)
	async = async && !r.cfg.NoAck
	if async {
		l.startAsync(ctx, r, ap)
	}
	next := time.Now().Add(l.offset)
	var pace pacer
	for i := 0; ctx.Err() == nil; i = (i + 1) % len(l.channels) {
		if l.interval > 0 {
			if !pace.until(ctx, next) {
				return
			}
			next = next.Add(l.interval)
		}
		if err := l.gate.wait(ctx, r.cfg.Stall); err != nil {
			if errors.Is(err, ErrStalled) {
				r.problems.add("stall", err)
				continue
			}
			return
		}
		if async {
			if i = l.publishAsync(ctx, i); i < 0 {
				return
			}
			continue
		}
		l.publishOne(pctx, r, i)
	}
}

// publishOne publishes the next message of channel position i.
func (l *lane) publishOne(ctx context.Context, r *run, i int) {
	ch, payload := l.next(r, i)
	if r.cfg.NoAck {
		if err := l.conn.(NoAckPublisher).PublishNoAck(ch, payload); err != nil {
			l.unsent(r, i, err) // it fails only locally
			return
		}
		l.settle(r, i, nil)
		return
	}
	l.settle(r, i, l.conn.Publish(ctx, ch, payload))
}

// next stamps the next message of channel position i and counts the
// deliveries it is owed; it returns the channel and the payload.
func (l *lane) next(r *run, i int) (channel, payload string) {
	l.sent = r.clock()
	st := Stamp{Publisher: l.id, Seq: l.seqs[i] + 1, Sent: l.sent}
	if r.feedLevels > 0 {
		l.buf = AppendFeed(l.buf[:0], st, r.feedLevels)
	} else {
		l.buf = AppendPayload(l.buf[:0], st, r.cfg.MessageBytes)
	}
	l.gate.published(l.fanout[i])
	payload = string(l.buf)
	if r.feedLevels > 0 {
		r.feeds.put(st, payload)
	}
	return r.channelNames[l.channels[i]], payload
}

// settle records the outcome of the message next prepared.
func (l *lane) settle(r *run, i int, err error) {
	switch {
	case err == nil:
		if !r.cfg.NoAck {
			r.ack.Record(int(l.id), r.clock()-l.sent)
		}
	case errors.Is(err, ErrRefused):
		l.gate.refused(l.fanout[i])
		r.problems.add("publish refused", err)
		return
	default:
		// The message may or may not be stored (a lost connection, no
		// acknowledgment in time): its number is used, and it is not
		// owed. Should it arrive, it counts as any other; should it
		// not, it is not lost (the server acknowledged nothing). The
		// error is counted, and fails a soak.
		r.problems.add("publish", err)
		if l.unsure == nil {
			l.unsure = make([][]uint64, len(l.channels))
		}
		l.unsure[i] = append(l.unsure[i], l.seqs[i]+1)
	}
	l.seqs[i]++
	l.published.Add(1)
}

// unsent takes back the message next prepared, which never left (the
// client was reconnecting, or closed): nothing was stored, so its number
// is used again.
func (l *lane) unsent(r *run, i int, err error) {
	l.gate.refused(l.fanout[i])
	r.problems.add("publish", err)
}

// pacer waits on one timer, reused: a lane at a fixed rate waits before
// each message, the subscribers' ramp before each connection.
type pacer struct{ t *time.Timer }

// until waits until t or ctx's end; false if ctx ended.
func (p *pacer) until(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	if p.t == nil {
		p.t = time.NewTimer(d)
	} else {
		p.t.Reset(d) // stopped or fired: no stale tick is left (Go 1.23 timers)
	}
	select {
	case <-p.t.C:
		return true
	case <-ctx.Done():
		p.t.Stop()
		return false
	}
}

// sleepUntil waits until t or ctx's end; false if ctx ended.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
