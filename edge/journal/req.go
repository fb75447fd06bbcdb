package journal

import (
	"sync"

	"github.com/nats-io/nats.go"
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
const msgIDHeader = "Nats-Msg-Id"

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
