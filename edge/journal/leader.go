package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/edge/store"
)

// msgGetRequest and msgGetResponse are JetStream's message get API
// (JSApiMsgGetRequest, JSApiMsgGetResponse), which the stream's leader
// answers: unlike a direct get, which a lagging follower may answer.
type msgGetRequest struct {
	Seq     uint64 `json:"seq,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`
}

type msgGetResponse struct {
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
	Message *struct {
		Subject string    `json:"subject"`
		Seq     uint64    `json:"seq"`
		Header  []byte    `json:"hdrs"`
		Data    []byte    `json:"data"`
		Time    time.Time `json:"time"`
	} `json:"message"`
}

// Latest returns, as the stream's leader holds it, the channel's newest
// message (seq 0) or its message at seq, with the Msg-Id it was
// published with; found is false if there is none (or the message at
// seq is another channel's).
func (j *Journal) Latest(ctx context.Context, key string, seq uint64) (f store.Frame, msgID string, found bool, err error) {
	req := msgGetRequest{Seq: seq}
	if seq == 0 {
		req.LastFor = j.subject(key)
	}
	return j.leaderGet(ctx, j.subject(key), &req)
}

// Shared reports whether other edges write to the log: their
// acknowledged messages reach this edge's store through the feed, a
// little after their publisher heard of them, so a read that must see
// them asks the stream's leader (LeaderRead). A sole writer's store
// holds every acknowledged message (Options.SoleWriter).
func (j *Journal) Shared() bool { return !j.opts.SoleWriter }

// LeaderRead returns, as the stream's leader holds it, the channel's
// newest message (from 0) or its first message at or after from: what
// the log has acknowledged, whichever edge published it.
func (j *Journal) LeaderRead(ctx context.Context, key string, from uint64) (store.Frame, bool, error) {
	req := msgGetRequest{LastFor: j.subject(key)}
	if from > 0 {
		req = msgGetRequest{Seq: from, NextFor: j.subject(key)}
	}
	f, _, found, err := j.leaderGet(ctx, j.subject(key), &req)
	return f, found, err
}

// leaderGet asks the stream's leader for the message req names, on
// subject subj (a channel's, or its purge markers').
func (j *Journal) leaderGet(ctx context.Context, subj string, req *msgGetRequest) (f store.Frame, msgID string, found bool, err error) {
	j.counters.reads.Add(1)
	data, err := json.Marshal(req)
	if err != nil {
		return store.Frame{}, "", false, fmt.Errorf("journal: message get: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, getTimeout)
		defer cancel()
	}
	m, err := j.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+j.opts.Stream, data)
	if err != nil {
		return store.Frame{}, "", false, fmt.Errorf("journal: message get from %s: %w", j.opts.Stream, err)
	}
	var resp msgGetResponse
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return store.Frame{}, "", false, fmt.Errorf("journal: message get from %s: %w", j.opts.Stream, err)
	}
	if e := resp.Error; e != nil {
		if e.ErrCode == errCodeNoMessage {
			return store.Frame{}, "", false, nil
		}
		return store.Frame{}, "", false, fmt.Errorf("journal: message get from %s: %s (code %d)", j.opts.Stream, e.Description, e.ErrCode)
	}
	msg := resp.Message
	if msg == nil || msg.Subject != subj {
		return store.Frame{}, "", false, nil
	}
	if len(msg.Header) > 0 {
		h, err := nats.DecodeHeadersMsg(msg.Header)
		if err != nil {
			return store.Frame{}, "", false, fmt.Errorf("journal: message get from %s: headers: %w", j.opts.Stream, err)
		}
		msgID = h.Get(msgIDHeader)
	}
	return store.Frame{Offset: msg.Seq, Time: msg.Time.UnixNano(), Data: msg.Data}, msgID, true, nil
}
