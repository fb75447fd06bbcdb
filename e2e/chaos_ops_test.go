package e2e

// The requests of a chaos client (chaos_worker_test.go), each recorded
// in the run's history.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/sluicehq/sluice/internal/chaos"
)

// store sends a request that may store m (a publish, write, CAS or
// delete) and records its outcome.
func (w *chaosWorker) store(m *chaos.Msg, action string, body map[string]any) {
	m.Span, m.Channel = w.span(), body["channel"].(string)
	w.run.h.AddMsg(m)
	r, err := w.conn.request(action, body, stamp(&m.Span))
	m.Replied = r.at
	code, reason := replyError(r)
	if m.Reason = reason; err != nil {
		m.Reason = err.Error()
	}
	if m.Outcome, m.Err = outcome(err, code); m.Outcome == chaos.Acked {
		var b struct {
			Position string `json:"position"`
		}
		_ = json.Unmarshal(r.body, &b)
		m.Off = w.conn.offset(m.Channel, b.Position, action+" ok")
		w.note(m.Channel, m.Off)
	}
}

func (w *chaosWorker) publish(ch string) {
	id := w.nextID()
	w.store(&chaos.Msg{ID: id, Kind: chaos.Publish}, "rtm/publish", map[string]any{"channel": ch, "message": id})
}

func (w *chaosWorker) write(ch string) {
	id := w.nextID()
	w.store(&chaos.Msg{ID: id, Kind: chaos.Write}, "rtm/write", map[string]any{"channel": ch, "message": id})
}

func (w *chaosWorker) delete(ch string) {
	w.store(&chaos.Msg{Kind: chaos.Delete}, "rtm/delete", map[string]any{"channel": ch})
}

// cas writes on the condition that a position seen is the newest: often
// right after a read of the newest, as a key-value client does.
func (w *chaosWorker) cas(ch string) {
	if w.r.IntN(2) == 0 {
		w.readAt(ch, 0)
	}
	at := w.someSeen(ch)
	if at == 0 {
		return
	}
	id := w.nextID()
	w.store(&chaos.Msg{ID: id, Kind: chaos.CAS, Expect: at}, "rtm/write",
		map[string]any{"channel": ch, "message": id, "position": w.position(ch, at)})
}

func (w *chaosWorker) purge(ch string) {
	p := &chaos.Purge{Span: w.span(), Channel: ch}
	w.run.h.AddPurge(p)
	r, err := w.conn.request("rtm/delete", map[string]any{"channel": ch, "purge": true}, stamp(&p.Span))
	p.Replied = r.at
	p.Outcome, p.Err = outcome(err, errorCode(r))
}

// read reads the newest message, or the one at a position seen.
func (w *chaosWorker) read(ch string) {
	at := uint64(0)
	if w.r.IntN(3) == 0 {
		at = w.someSeen(ch)
	}
	w.readAt(ch, at)
}

func (w *chaosWorker) readAt(ch string, at uint64) {
	rd := &chaos.Read{Span: w.span(), Channel: ch, At: at}
	w.run.h.AddRead(rd)
	body := map[string]any{"channel": ch}
	if at != 0 {
		body["position"] = w.position(ch, at)
	}
	r, err := w.conn.request("rtm/read", body, stamp(&rd.Span))
	if err != nil {
		rd.Err = "lost"
		return
	}
	rd.Replied = r.at
	if rd.Err, rd.Reason = replyError(r); rd.Err != "" {
		return
	}
	var b struct {
		Position string  `json:"position"`
		Message  *string `json:"message"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil {
		rd.Err = "undecodable: " + err.Error()
		return
	}
	if rd.Off = w.conn.offset(rd.Channel, b.Position, "read ok"); b.Message != nil {
		rd.Value = *b.Message
	}
	w.note(ch, rd.Off)
}

// subscribe subscribes to ch: live, at a position seen, or with a
// history count or age.
func (w *chaosWorker) subscribe(ch string) {
	if len(w.subs) >= maxSubs {
		w.unsubscribe(ch)
	}
	s := &chaos.Sub{Channel: ch}
	switch w.r.IntN(4) {
	case 0:
		s.Mode = chaos.Live
	case 1:
		if s.Mode, s.At = chaos.AtPos, w.someSeen(ch); s.At == 0 {
			s.Mode = chaos.Live
		}
	case 2:
		s.Mode, s.N = chaos.Count, 1+w.r.Int64N(4)
	case 3:
		s.Mode, s.N = chaos.Age, 1+w.r.Int64N(5)
	}
	w.subscribeWith(s)
}

// publishThenHistory publishes one to three messages on a new channel of
// the client's own and, once they are acknowledged, subscribes with a
// history covering them (count, or age): what the RTM SDKs'
// publish_and_subscribe_with_history tests do, and what lost messages on
// a cluster (issue 29 §1: a history reaching back to the oldest message
// an edge holds). No other client publishes there, so the model knows
// the exact answer.
func (w *chaosWorker) publishThenHistory(string) {
	w.n++
	ch := fmt.Sprintf("solo%d.%d", w.id, w.n)
	n := 1 + w.r.IntN(3)
	for range n {
		w.publish(ch)
	}
	if len(w.subs) >= maxSubs {
		w.unsubscribe(ch)
	}
	s := &chaos.Sub{Channel: ch, Mode: chaos.Count, N: int64(n)}
	if w.r.IntN(3) == 0 {
		s.Mode, s.N = chaos.Age, 2
	}
	w.subscribeWith(s)
}

// subscribeWith sends the subscribe s says, under a fresh id.
func (w *chaosWorker) subscribeWith(s *chaos.Sub) {
	w.n++
	s.Span, s.Name = w.span(), fmt.Sprintf("s%d", w.n)
	body := map[string]any{"channel": s.Channel, "subscription_id": s.Name}
	switch s.Mode {
	case chaos.AtPos, chaos.ReadAll:
		body["position"] = w.position(s.Channel, s.At)
	case chaos.Count:
		body["history"] = map[string]any{"count": s.N}
	case chaos.Age:
		body["history"] = map[string]any{"age": s.N}
	}
	if s.Mode == chaos.ReadAll {
		body["batch"] = 1 // every message's exact position
	}
	w.run.h.AddSub(s)
	w.conn.watch(s)
	r, err := w.conn.request("rtm/subscribe", body, stamp(&s.Span))
	w.run.h.Do(func() {
		s.Replied = r.at
		switch {
		case err != nil:
			s.Err, s.End = "lost", chaos.Lost
		case errorCode(r) != "":
			s.Err, s.End = errorCode(r), chaos.SubError
			_, s.Reason = replyError(r)
		}
	})
	if s.Err != "" {
		w.conn.unwatch(s.Name)
		return
	}
	var b struct {
		Position string `json:"position"`
	}
	_ = json.Unmarshal(r.body, &b)
	start := w.conn.offset(s.Channel, b.Position, "subscribe ok")
	w.run.h.Do(func() { s.Start = start })
	w.subs[s.Name] = s
}

// unsubscribe ends one of w's subscriptions.
func (w *chaosWorker) unsubscribe(string) {
	if len(w.subs) == 0 {
		return
	}
	names := slices.Sorted(maps.Keys(w.subs))
	name := names[w.r.IntN(len(names))] // drawn in a seed's order
	s := w.subs[name]
	delete(w.subs, name)
	r, err := w.conn.request("rtm/unsubscribe", map[string]any{"subscription_id": name}, func() {})
	if err != nil {
		return // lost: the connection's end records it
	}
	var b struct {
		Position string `json:"position"`
	}
	_ = json.Unmarshal(r.body, &b)
	code, off := errorCode(r), w.conn.offset(s.Channel, b.Position, "unsubscribe ok")
	w.conn.unwatch(name)
	w.run.h.Do(func() {
		if code == "" {
			s.End, s.EndOff = chaos.Unsubscribed, off
		} else if s.End == chaos.Open {
			s.End, s.EndErr = chaos.Lost, "unsubscribe: "+code
		}
	})
}

// move leaves this edge for another, taking the subscriptions along.
func (w *chaosWorker) move(string) {
	w.conn.close()
}
