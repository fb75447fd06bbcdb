package journal

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
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

// SwitchHeader is the NATS header of a message that arms a dead man's
// switch: "SECONDS BASE64", the ttl in seconds and the ttl_message as
// the edge encodes a publish's message (binary for msgpack, hence the
// base64: a header is text).
const SwitchHeader = "Sluice-Switch"

// maxSwitchTTL bounds the ttl a switch header may carry: the edge arms
// switches of a day at most, and a larger value would overflow a
// time.Duration.
const maxSwitchTTL = 7 * 24 * 60 * 60

// SwitchFunc is told of a switch the feed applied: the message at offset
// of the channel key, stored at stored, armed a switch of ttl seconds
// that publishes message. It runs on the feed's goroutine and must not
// block; message is its own.
type SwitchFunc = func(key string, offset uint64, stored time.Time, ttl int64, message []byte)

// OnSwitch sets the function the feed tells of the switches it applies.
// Set it before Start: the replay after a restart brings the switches
// armed within Options.Replay.
func (j *Journal) OnSwitch(f SwitchFunc) { j.switchFn.Store(&f) }

// PublishArming is PublishFrom of a message that arms a dead man's
// switch of ttl seconds publishing ttlMessage: the log keeps the switch
// with the message (SwitchHeader) for every edge's OnSwitch.
func (j *Journal) PublishArming(key string, payload []byte, origin string, ttl int64, ttlMessage []byte, done func(seq uint64, err error)) {
	j.publish(Subject(key), payload, "", origin, nil, armed(ttl, ttlMessage), done)
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
// seq on subj carries in v, if any. f.applyMu.
func (f *feed) announceSwitch(seq uint64, subj string, stored time.Time, v string) {
	fn := f.j.switchFn.Load()
	if fn == nil {
		return
	}
	key, ok := keyOf(subj)
	if !ok {
		return
	}
	ttl, message, ok := parseSwitch(v)
	if !ok {
		f.j.log.Warn("journal: a message with a switch header that does not parse", "subject", subj, "seq", seq)
		return
	}
	(*fn)(key, seq, stored, ttl, message)
}
