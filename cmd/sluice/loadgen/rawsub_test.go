package loadgen

import (
	"bytes"
	"strings"
	"testing"
	"time"

	codecjson "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/fossil"
	"github.com/sluicehq/sluice/shared/rtm"
)

// rtmPos is the position at off of epoch 1.
func rtmPos(off uint64) rtm.Position { return rtm.Position{Epoch: 1, Offset: off} }

// messagesOf returns where the messages of a data PDU are in it.
func messagesOf(pdu []byte) (from, to int) {
	return bytes.Index(pdu, []byte(`"messages":[`)) + len(`"messages":[`), bytes.LastIndexByte(pdu, ']')
}

// rawPDUs are data PDUs of a feed as the edge writes them for a delta
// subscriber: the first message whole, the next as a delta.
func rawPDUs(t *testing.T, a, b []byte) (whole, delta []byte) {
	t.Helper()
	var enc fossil.Encoder
	d, ok := codecjson.Codec{}.AppendDelta(nil, enc.AppendCreate(nil, a, b))
	if !ok {
		t.Fatal("a feed delta that is not a JSON string")
	}
	whole = codecjson.Codec{}.AppendData(nil, "feed", rtmPos(1), [][]byte{a})
	delta = codecjson.Codec{}.AppendDeltaData(nil, "feed", rtmPos(2), [][]byte{d})
	return whole, delta
}

// readRaw hands pdus to a raw subscriber and returns the messages it
// passed on, or the error of the first PDU it refused.
func readRaw(pdus ...[]byte) ([]string, error) {
	var got []string
	s := &rawSub{}
	for _, p := range pdus {
		// Cloned: a raw subscriber's message is valid during the call.
		if err := s.push(p, func(m string) { got = append(got, strings.Clone(m)) }); err != nil {
			return got, err
		}
	}
	return got, nil
}

// TestRawSubscriberMessages: a raw subscriber passes on each message's
// JSON as published, a delta applied to the one before, whether the
// edge's layout is found at once or the body is walked key by key, and
// with several messages in a PDU.
func TestRawSubscriberMessages(t *testing.T) {
	levels := feedLevels(2048)
	a := AppendFeed(nil, Stamp{Publisher: 1, Seq: 7, Sent: time.Second}, levels)
	b := AppendFeed(nil, Stamp{Publisher: 1, Seq: 8, Sent: 2 * time.Second}, levels)
	whole, delta := rawPDUs(t, a, b)
	from, to := messagesOf(delta)
	d := string(delta[from:to])
	both := codecjson.Codec{}.AppendData(nil, "feed", rtmPos(3), [][]byte{a, b})
	for _, tc := range []struct {
		name string
		pdus []string
		want [][]byte
	}{
		{name: "whole then delta", pdus: []string{string(whole), string(delta)}, want: [][]byte{a, b}},
		{name: "two in a PDU", pdus: []string{string(both)}, want: [][]byte{a, b}},
		{name: "fields in another order", want: [][]byte{a, b}, pdus: []string{
			`{"body":{"messages":[` + string(a) + `],"position":"1:1","subscription_id":"feed"},"action":"rtm/subscription/data"}`,
			`{"action":"rtm/subscription/data","body":{"delta":true,"messages":[` + d + `],"x":[1,{"y":"]"}]}}`,
		}},
		{name: "an escaped delta", pdus: []string{string(whole),
			`{"action":"rtm/subscription/data","body":{"messages":[` + strings.ReplaceAll(d, ":", `\u003a`) + `],"delta":true}}`},
			want: [][]byte{a, b}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pdus [][]byte
			for _, p := range tc.pdus {
				pdus = append(pdus, []byte(p))
			}
			got, err := readRaw(pdus...)
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("got %d messages, %v; want %d", len(got), err, len(tc.want))
			}
			for i := range got {
				if got[i] != string(tc.want[i]) {
					t.Errorf("message %d:\n%s\nwant\n%s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestRawSubscriberChecksEveryByte: any byte of a message altered, whole
// or a delta, is refused by the raw subscriber or makes a
// message that parseFeed refuses (the run counts either); never a
// message taken for the one published.
func TestRawSubscriberChecksEveryByte(t *testing.T) {
	levels := feedLevels(512)
	sa := Stamp{Publisher: 2, Seq: 40, Sent: time.Second}
	sb := Stamp{Publisher: 2, Seq: 41, Sent: time.Second + time.Millisecond}
	a, b := AppendFeed(nil, sa, levels), AppendFeed(nil, sb, levels)
	whole, delta := rawPDUs(t, a, b)
	var buf []byte
	// caught: refused, or a message parseFeed refuses, or one of another
	// stamp (the run counts it foreign, duplicated or lost).
	caught := func(pdus ...[]byte) bool {
		got, err := readRaw(pdus...)
		for i, m := range got {
			if st, perr := parseFeed(&feedCache{}, &buf, m, levels); perr != nil || st != []Stamp{sa, sb}[i] {
				return true
			}
		}
		return err != nil || len(got) < len(pdus)
	}
	if caught(whole, delta) {
		t.Fatal("the PDUs as the edge writes them are refused")
	}
	from, to := messagesOf(whole)
	for i := from; i < to; i++ {
		bad := bytes.Clone(whole)
		bad[i] ^= 1
		if !caught(bad) || !caught(bad, delta) {
			t.Errorf("byte %d of the whole message altered: not caught\n%s", i, bad)
		}
	}
	from, to = messagesOf(delta)
	for i := from; i < to; i++ {
		bad := bytes.Clone(delta)
		bad[i] ^= 1
		if !caught(whole, bad) {
			t.Errorf("byte %d of the delta altered: not caught\n%s", i, bad)
		}
	}
}

// FuzzRawSubscriber: whatever a PDU holds, a raw subscriber takes it or
// refuses it, without a panic or a loop, and a message it passes on is
// at most the size a delta may make.
func FuzzRawSubscriber(f *testing.F) {
	a := AppendFeed(nil, Stamp{Publisher: 1, Seq: 2, Sent: time.Second}, 4)
	b := AppendFeed(nil, Stamp{Publisher: 1, Seq: 3, Sent: 2 * time.Second}, 4)
	var enc fossil.Encoder
	d, _ := codecjson.Codec{}.AppendDelta(nil, enc.AppendCreate(nil, a, b))
	f.Add(codecjson.Codec{}.AppendData(nil, "feed", rtmPos(1), [][]byte{a}), codecjson.Codec{}.AppendDeltaData(nil, "feed", rtmPos(2), [][]byte{d}))
	f.Add([]byte(`{"action":"rtm/subscription/data","body":{"messages":[1,[2],{"a":"]"}],"delta":false}}`), []byte(`{"action":"rtm/subscription/info","body":{}}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		s := &rawSub{}
		for _, p := range [][]byte{first, second} {
			_ = s.push(p, func(m string) {
				if len(m) > max(len(first), len(second), maxRawMessage) {
					t.Fatalf("a message of %d bytes", len(m))
				}
			})
		}
	})
}
