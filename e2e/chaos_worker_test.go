package e2e

// A chaos client: one connection at a time to one edge, doing one
// request at a time, each drawn from the run's seed, each recorded in
// the history with its interval and outcome.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/sluicehq/sluice/internal/chaos"
	"github.com/sluicehq/sluice/shared/rtm"
)

// chaosWorker is one client of the run.
type chaosWorker struct {
	id   int
	r    *rand.Rand
	run  *chaosRun
	edge int
	conn *rtmConn
	subs map[string]*chaos.Sub // the subscriptions it believes live, by id
	n    int                   // messages and subscriptions made
	seen map[string][]uint64   // per channel, positions seen (for CAS, reads, subscribes at)
}

// maxSubs bounds a client's live subscriptions.
const maxSubs = 3

// op is one kind of request, drawn with its weight.
type op struct {
	weight int
	do     func(w *chaosWorker, ch string)
	purge  bool // drawn only in runs with purges (chaosSettings.purges)
}

var chaosOps = []op{
	{300, (*chaosWorker).publish, false},
	{40, (*chaosWorker).write, false},
	{80, (*chaosWorker).cas, false},
	{30, (*chaosWorker).delete, false},
	{1, (*chaosWorker).purge, true}, // rare: each makes the model unsure of a stretch of the log
	{40, (*chaosWorker).publishThenHistory, false},
	{120, (*chaosWorker).read, false},
	{120, (*chaosWorker).subscribe, false},
	{50, (*chaosWorker).unsubscribe, false},
	{20, (*chaosWorker).move, false},
}

// loop does requests until stop closes; it leaves its subscriptions open.
func (w *chaosWorker) loop(stop <-chan struct{}) {
	total := 0
	ops := chaosOps
	if !w.run.purges {
		ops = slices.DeleteFunc(slices.Clone(ops), func(o op) bool { return o.purge })
	}
	for _, o := range ops {
		total += o.weight
	}
	for {
		select {
		case <-stop:
			return
		default:
		}
		if w.conn == nil || w.conn.isDead() {
			if !w.connect(stop) {
				return
			}
			continue
		}
		ch := w.run.channels[w.r.IntN(len(w.run.channels))]
		k := w.r.IntN(total)
		for _, o := range ops {
			if k -= o.weight; k < 0 {
				o.do(w, ch)
				break
			}
		}
	}
}

// connect dials an edge (another one than before, if it can) and
// resubscribes what was lost, each from the position after the last
// message it delivered: a subscriber moving to another edge.
func (w *chaosWorker) connect(stop <-chan struct{}) bool {
	n := len(w.run.urls)
	e := w.edge // the first connection: the edge given
	if w.conn != nil {
		w.conn.close()
		e = (w.edge + 1 + w.r.IntN(n-1)) % n
	}
	for try := 0; ; try, e = try+1, (e+1)%n {
		c, err := dialRTM(context.Background(), w.run.urls[e], e, w.run.h)
		if err == nil {
			w.conn, w.edge = c, e
			break
		}
		select { // the edges are down or frozen: try again a little later
		case <-stop:
			return false
		case <-time.After(time.Duration(min(try, 20)) * 10 * time.Millisecond):
		}
	}
	lost := w.subs
	w.subs = map[string]*chaos.Sub{}
	for _, name := range slices.Sorted(maps.Keys(lost)) { // in a seed's order
		s := lost[name]
		var end chaos.End
		var from uint64
		w.run.h.Do(func() { end, from = s.End, resumeFrom(s) })
		if end == chaos.Lost && from != 0 {
			w.subscribeWith(&chaos.Sub{Channel: s.Channel, Mode: chaos.AtPos, At: from})
		}
	}
	return true
}

// resumeFrom is where a subscription resumes: after its last data.
func resumeFrom(s *chaos.Sub) uint64 {
	if n := len(s.Batches); n > 0 {
		return s.Batches[n-1].Off
	}
	return s.Start
}

// span stamps a record sent now on w's connection.
func (w *chaosWorker) span() chaos.Span {
	return chaos.Span{Conn: w.id, Edge: w.edge}
}

// position returns the text of offset off of ch in the channel's epoch,
// as the run first saw it: a client that has noted no position of it
// yet (its first subscription, lost, resumes on another edge) takes the
// run's (before, it resumed at epoch 0, which the edge rightly called
// another history). Each channel has its own: a log in partitions
// numbers a channel in its partition's stream.
func (w *chaosWorker) position(ch string, off uint64) string {
	return rtm.Position{Epoch: w.run.h.Epoch(ch), Offset: off}.String()
}

// note keeps a position seen on ch, and the epoch.
func (w *chaosWorker) note(ch string, off uint64) {
	if off == 0 {
		return
	}
	w.seen[ch] = append(w.seen[ch], off)
	if len(w.seen[ch]) > 50 {
		w.seen[ch] = w.seen[ch][25:]
	}
}

// someSeen returns a position seen on ch (recent ones more likely), 0
// for none.
func (w *chaosWorker) someSeen(ch string) uint64 {
	s := w.seen[ch]
	if len(s) == 0 {
		return 0
	}
	if w.r.IntN(3) > 0 {
		return s[len(s)-1]
	}
	return s[w.r.IntN(len(s))]
}

// outcome classifies an answer to a request that may store something.
func outcome(err error, code string) (chaos.Outcome, string) {
	switch {
	case err != nil:
		return chaos.Maybe, "lost"
	case code == "":
		return chaos.Acked, ""
	case code == "unavailable" || code == "?":
		return chaos.Maybe, code
	}
	return chaos.Refused, code
}

// stamp runs before a request leaves: its sending time.
func stamp(s *chaos.Span) func() { return func() { s.Sent = time.Now() } }

// nextID returns a fresh message value.
func (w *chaosWorker) nextID() string {
	w.n++
	return fmt.Sprintf("c%d.%d", w.id, w.n)
}
