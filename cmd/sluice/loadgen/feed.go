package loadgen

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
)

// The payload kinds (Config.Payload).
const (
	// PayloadPadded is a stamp and padding: a plain ASCII string.
	PayloadPadded = "padded"
	// PayloadFeed is a JSON object of about MessageBytes bytes of which a
	// few fields change per message (its stamp, a time stamp and one
	// level's two numbers), as a market or dashboard feed sends: what
	// delta compression (rtm/subscribe delta) is for. The rest of a
	// message is a function of its stamp too, so that a subscriber checks
	// every byte of what it received (after the client applied deltas).
	PayloadFeed = "feed"
)

// Payloads lists the payload kinds, for help texts.
var Payloads = []string{PayloadPadded, PayloadFeed}

// errCorrupt reports a message whose stamp is the run's but whose bytes
// are not the ones published with it. Result.Check fails on any.
var errCorrupt = errors.New("loadgen: message differs from the one published")

// ProblemCorrupt is the kind of error (Result.Errors) of a message that
// arrived altered.
const ProblemCorrupt = "corrupt message"

// feedPrefix starts every feed message; the stamp follows. The keys are
// in the order the codecs write them (sorted) and every number is an
// integer, so a subscriber that encodes the object it received as JSON
// gets the bytes published.
const feedPrefix = `{"id":"`

// AppendFeed appends the feed message of stamp s with levels price
// levels. Level s.Seq % levels carries numbers of its own; the others are
// the same in every message.
func AppendFeed(dst []byte, s Stamp, levels int) []byte {
	dst = append(dst, feedPrefix...)
	dst = AppendPayload(dst, s, StampSize)
	dst = append(dst, `","levels":[`...)
	for j := range levels {
		if j > 0 {
			dst = append(dst, ',')
		}
		orders, price, size := feedNumbers(s, levels, j)
		dst = append(dst, `{"orders":`...)
		dst = strconv.AppendInt(dst, orders, 10)
		dst = append(dst, `,"price":`...)
		dst = strconv.AppendInt(dst, price, 10)
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, size, 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"market":"SLC1","ts":`...)
	dst = strconv.AppendInt(dst, feedTime(s), 10)
	return append(dst, `,"venue":"XNAS"}`...)
}

// feedTime is the time stamp of the feed message of s, in nanoseconds:
// every digit of the stamp's Sent, so that a message whose stamp was
// altered anywhere differs from the message of the altered stamp (in
// milliseconds, an altered digit below them made a message that checked).
func feedTime(s Stamp) int64 { return 1700000000000000000 + int64(s.Sent) }

// feedNumbers are the numbers of level j of the feed message of stamp s
// with levels levels (AppendFeed).
func feedNumbers(s Stamp, levels, j int) (orders, price, size int64) {
	orders, price, size = int64(j*7+3)%17, int64(10000+25*j), int64(500+j*37)
	if j == int(s.Seq%uint64(levels)) {
		orders, size = int64(s.Seq%17), 1000+int64(s.Seq%100000)
	}
	return orders, price, size
}

// feedObject returns the feed message p in the canonical model, as the
// JSON codec decodes it, without decoding it: a publisher's decoding of
// each 2 KiB object cost the generator more than a message's whole
// fan-out to 16 subscribers cost the edge. ok is false when p is not
// exactly a feed message (AppendFeed's bytes for its stamp).
func feedObject(buf *[]byte, p string) (v map[string]any, ok bool) {
	if !strings.HasPrefix(p, feedPrefix) || len(p) < len(feedPrefix)+StampSize {
		return nil, false
	}
	st, err := ParseStamp(p[len(feedPrefix):])
	levels := strings.Count(p, `{"orders":`)
	if err != nil || levels == 0 {
		return nil, false
	}
	if *buf = AppendFeed((*buf)[:0], st, levels); string(*buf) != p {
		return nil, false
	}
	lv := make([]any, levels)
	for j := range lv {
		orders, price, size := feedNumbers(st, levels, j)
		lv[j] = map[string]any{"orders": orders, "price": price, "size": size}
	}
	id := p[len(feedPrefix) : len(feedPrefix)+StampSize]
	return map[string]any{"id": id, "levels": lv, "market": "SLC1",
		"ts": feedTime(st), "venue": "XNAS"}, true
}

// feedLevels returns how many levels make a feed message of at least
// size bytes.
func feedLevels(size int) int {
	n := 1
	for len(AppendFeed(nil, Stamp{}, n)) < size {
		n++
	}
	return n
}

// minFeedBytes is the size of a feed message of one level.
var minFeedBytes = len(AppendFeed(nil, Stamp{}, 1))

// parseFeed reads the stamp of a feed message and checks the message
// byte for byte against the one published with it: its publisher's bytes
// if cache still has them, else made again in *buf.
func parseFeed(cache *feedCache, buf *[]byte, p string, levels int) (Stamp, error) {
	if len(p) < len(feedPrefix)+StampSize || p[:len(feedPrefix)] != feedPrefix {
		return Stamp{}, errStamp
	}
	st, err := ParseStamp(p[len(feedPrefix):])
	if err != nil {
		return Stamp{}, err
	}
	want, ok := cache.get(st)
	if !ok {
		*buf = AppendFeed((*buf)[:0], st, levels)
		want = string(*buf)
	}
	if want != p {
		return st, errCorrupt
	}
	return st, nil
}

// feedCacheSlots is how many feed messages a feedCache keeps: many
// windows' worth of every lane's, so that a subscriber nearly always
// finds the message it got; one it does not is made again.
const feedCacheSlots = 1 << 13

// feedCache keeps the feed messages published lately, by stamp, so that
// each subscriber compares what it received with the bytes the publisher
// made instead of making them again: with 200 subscribers that cost the
// generator a quarter of its CPU. A slot holds the last message of the
// stamps that map to it. The zero feedCache is ready; it is safe for
// concurrent use.
type feedCache struct {
	slots [feedCacheSlots]atomic.Pointer[feedEntry]
}

// feedEntry is a message published, immutable once in a slot.
type feedEntry struct {
	st  Stamp
	msg string
}

// slot is where st's message is kept.
func (c *feedCache) slot(st Stamp) *atomic.Pointer[feedEntry] {
	h := (uint64(st.Publisher)<<48 ^ st.Seq) * 0x9E3779B97F4A7C15
	return &c.slots[h>>(64-13)]
}

// put keeps msg, published with st.
func (c *feedCache) put(st Stamp, msg string) {
	c.slot(st).Store(&feedEntry{st: st, msg: msg})
}

// get returns the message published with st, if kept.
func (c *feedCache) get(st Stamp) (string, bool) {
	if e := c.slot(st).Load(); e != nil && e.st == st {
		return e.msg, true
	}
	return "", false
}
