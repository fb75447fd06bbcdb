package membership

import (
	"fmt"

	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Budget is the most bytes a presence snapshot or page takes of a
// connection's queue of queueBytes: a quarter of it, so that a large
// room's does not close a connection that reads.
func Budget(queueBytes int) int { return max(queueBytes/4, 1) }

// Page encodes in cd the reply to rtm/presence id with page p, cut to
// budget (its next then names the last member sent).
func Page(cd codec.Codec, id rtm.ID, p *presence.Page, budget int) ([]byte, error) {
	all := Members(p.Members)
	r := &rtm.PresenceReply{Users: int64(p.Users), Connections: int64(p.Connections)}
	pdu := &rtm.PDU{Action: rtm.Reply(rtm.ActionPresence, rtm.OutcomeOK), ID: id, Body: r}
	frame, err := Fit(all, budget, func(ms []rtm.PresenceMember) ([]byte, error) {
		r.Members, r.Next = ms, p.Next
		if len(ms) < len(all) {
			r.Next = ms[len(ms)-1].UserID
		}
		return cd.AppendPDU(nil, pdu)
	})
	if err != nil {
		return nil, fmt.Errorf("membership: encode a presence page: %w", err)
	}
	return frame, nil
}

// Fit encodes the first n members of ms with encode, for the largest n
// it tries (all of them first, then fewer; at least 1) whose frame fits
// budget.
func Fit(ms []rtm.PresenceMember, budget int, encode func([]rtm.PresenceMember) ([]byte, error)) ([]byte, error) {
	n := len(ms)
	for {
		frame, err := encode(ms[:n])
		if err != nil || len(frame) <= budget || n <= 1 {
			return frame, err
		}
		// A share in proportion to what fitted, or half, whichever is
		// fewer: a frame need not be encoded many times.
		n = max(1, min(n/2, int(int64(n)*int64(budget)/int64(len(frame))*9/10)))
	}
}

// Members turns registry members into the wire's.
func Members(ms []presence.Member) []rtm.PresenceMember {
	out := make([]rtm.PresenceMember, len(ms))
	for i, m := range ms {
		out[i] = rtm.PresenceMember{UserID: m.UserID, Info: m.Info, Connections: int64(m.Connections)}
	}
	return out
}

// Reply turns a registry page into the body of rtm/presence's reply (and
// the server API's).
func Reply(p presence.Page) *rtm.PresenceReply {
	return &rtm.PresenceReply{Users: int64(p.Users), Connections: int64(p.Connections), Next: p.Next,
		Members: Members(p.Members)}
}
