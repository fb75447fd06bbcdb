package journal

import (
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A publish in flight (pubReq) costs four allocations and about 750
// bytes: the request, its NATS header map, the map's one value and the
// payload's copy. Most of the bytes a durable edge allocates per publish
// beyond what JetStream does, and so most of the collector's work they
// cause. A request whose publish was sent once, by Publish itself, and
// stored goes back to reqPool once its caller has its answer, with its
// map and buffer, for a later publish. One whose message was handed to
// any other send (a retry, the send of a held publish) is never reused:
// that send may still be reading it. Nor is one that failed: it is
// rare, and its paths are many.

// msgIDHeader is the NATS header of a message's Msg-Id.
const msgIDHeader = jetstream.MsgIDHeader

// maxPooledData bounds the payload buffer a reused request keeps: a
// rare large message does not pin its size in the pool.
const maxPooledData = 4 << 10

var reqPool sync.Pool // of *pubReq, reset by recycle

// newReq returns a request for a message on subj with reply subject
// reply, Msg-Id msgID and a copy of payload (sent again on a retry,
// after the caller reused its buffer).
func newReq(subj, reply, msgID string, payload []byte) *pubReq {
	r, _ := reqPool.Get().(*pubReq)
	if r == nil {
		r = &pubReq{msg: nats.Msg{Header: nats.Header{msgIDHeader: make([]string, 1)}}}
	}
	r.msg.Subject, r.msg.Reply = subj, reply
	r.msg.Header[msgIDHeader][0] = msgID
	r.msg.Data = append(r.msg.Data[:0], payload...)
	return r
}

// recycle puts r back in reqPool. Its caller holds the only reference
// to it (the publisher and the feed are done with it, and no send has
// its message).
func (r *pubReq) recycle() {
	h, data := r.msg.Header, r.msg.Data
	if len(h) != 1 || len(h[msgIDHeader]) != 1 {
		// A conditional or an origin header, too.
		clear(h)
		h[msgIDHeader] = make([]string, 1)
	}
	h[msgIDHeader][0] = ""
	if cap(data) > maxPooledData {
		data = nil
	}
	*r = pubReq{}
	r.msg.Header, r.msg.Data = h, data[:0]
	reqPool.Put(r)
}

// A sole writer's reply subjects serve again, too. A publish's answer
// goes to its reply subject, which the NATS server looks up in its
// subscriptions as it sends it, and caches for the next message to the
// same subject: a subject of its own per publish never hits the cache,
// and each miss costs the server a lookup, a copy of the subject and
// the eviction of another (about 6% of a publish's CPU). So a sole
// writer's publishes take their reply subjects from a few, reused: the
// subject of a publish acknowledged goes back to the free ones, for a
// later publish. Only one whose message was sent once (not lent, above)
// and whose one answer came: a single node answers each message it gets
// once, so no late answer can reach the subject's next publish. (In a
// cluster, a stream leader that steps down as it stores a message and
// its successor could both answer it; there the subjects are not
// reused.) A publish that failed, or was retried, takes its subject
// with it: a late answer to it finds no publish and is dropped. The
// Msg-Id, which must name one publish, is then what the reply subject
// is without reuse.

// replies hands out the reply subjects of a sole writer's publishes.
// The publisher's p.mu guards it.
type replies struct {
	on     bool              // reuse (Options.SoleWriter); else each publish's token names its reply subject
	free   []string          // subjects free for a later publish, the last freed first
	tokOf  map[string]uint64 // the token of the publish each subject in use serves
	minted uint64            // subjects made so far
}

// take returns a reply subject for the publish with token tok.
func (rs *replies) take(inbox string, tok uint64) string {
	var subj string
	if n := len(rs.free); n > 0 {
		subj = rs.free[n-1]
		rs.free = rs.free[:n-1]
	} else {
		// "_" is no digit of a token: these never name one.
		rs.minted++
		subj = inbox + "_" + strconv.FormatUint(rs.minted, 36)
	}
	if rs.tokOf == nil {
		rs.tokOf = make(map[string]uint64)
	}
	rs.tokOf[subj] = tok
	return subj
}

// release takes back the reply subject of r, which leaves the pending
// publishes: free for a later publish if r's acknowledgment came (acked)
// and its message was sent once, else never to be used again.
func (rs *replies) release(r *pubReq, acked bool) {
	if !rs.on {
		return
	}
	subj := r.msg.Reply
	delete(rs.tokOf, subj)
	if acked && !r.lent {
		rs.free = append(rs.free, subj)
	}
}
