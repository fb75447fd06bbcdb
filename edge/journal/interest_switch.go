package journal

import (
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// An edge fed by interest receives the switch-arming messages (rtm/publish
// with ttl) of the channels it follows only, where the ordered feed
// announced every switch to every edge, so that another edge fires one
// whose arming edge went. So the edge that armed a switch also announces
// it on a core subject every edge on the interest feed subscribes to:
// one small message per arming publish, not per message. Core NATS may
// drop one; the arming edge keeps its own standby, and the edges
// following the channel theirs, as before.

// switchSubject is the core subject of the switch announcements.
func (j *Journal) switchSubject() string { return feedPrefix + j.opts.Stream + ".$switch" }

// announceArmed tells the other edges of a switch this edge armed:
// the message of stream subject subj at seq, its SwitchHeader value v.
func (j *Journal) announceArmed(subj string, seq uint64, v string) {
	m := nats.NewMsg(j.switchSubject())
	m.Header.Set(hdrSubject, subj)
	m.Header.Set(hdrSeq, strconv.FormatUint(seq, 10))
	m.Header.Set(SwitchHeader, v)
	if err := j.nc.PublishMsg(m); err != nil {
		j.log.Debug("journal: announce a switch", "subject", subj, "seq", seq, "err", err)
	}
}

// watchSwitches subscribes to the other edges' switch announcements.
func (i *interest) watchSwitches() (err error) {
	i.switches, err = i.j.nc.Subscribe(i.j.switchSubject(), func(m *nats.Msg) {
		seq, err := strconv.ParseUint(m.Header.Get(hdrSeq), 10, 64)
		if err != nil {
			return
		}
		// Stored a moment ago, on the arming edge's clock: close enough
		// for a timer of whole seconds.
		i.j.announceSwitch(seq, m.Header.Get(hdrSubject), time.Now(), m.Header.Get(SwitchHeader), false)
	})
	if err != nil {
		return err
	}
	// The subscription reaches the server with the connection's next
	// write: wait for it, so that the edge hears of the switches armed
	// once it serves (a busy machine delayed it past an arming publish).
	return i.j.nc.FlushTimeout(5 * time.Second)
}
