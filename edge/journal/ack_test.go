package journal

import (
	"encoding/json"
	"strconv"
	"testing"
)

func ackPublisher() *publisher {
	p := &publisher{}
	p.ackHead = []byte(`{"stream":"SLUICE","seq":`)
	return p
}

func TestAckSeqReadsTheServersForms(t *testing.T) {
	p := ackPublisher()
	tests := []struct {
		in   string
		seq  uint64
		fast bool
	}{
		{`{"stream":"SLUICE","seq":1}`, 1, true},
		{`{"stream":"SLUICE","seq":18446744073709551615}`, 0, false}, // 20 digits: left to encoding/json
		{`{"stream":"SLUICE","seq":42,"duplicate": true}`, 42, true},
		{`{"stream":"SLUICE","domain":"hub","seq":7}`, 0, false},
		{`{"stream":"OTHER","seq":7}`, 0, false},
		{`{"stream":"SLUICE","seq":0}`, 0, false},
		{`{"stream":"SLUICE","seq":07}`, 0, false},
		{`{"stream":"SLUICE","seq":7,"batch":"b","count":1}`, 0, false},
		{`{"error":{"code":503,"err_code":10039,"description":"no leader"},"stream":"SLUICE","seq":0}`, 0, false},
		{`{"stream":"SLUICE","seq":}`, 0, false},
		{`{"stream":"SLUICE","seq":12`, 0, false},
	}
	for _, tt := range tests {
		seq, ok := p.ackSeq([]byte(tt.in))
		if ok != tt.fast || seq != tt.seq {
			t.Errorf("ackSeq(%s) = %d, %v; want %d, %v", tt.in, seq, ok, tt.seq, tt.fast)
		}
	}
}

// FuzzAckSeq: whatever the fast path reads, encoding/json reads the same
// way, as a plain acknowledgment of that sequence from the stream.
func FuzzAckSeq(f *testing.F) {
	for _, s := range []string{`{"stream":"SLUICE","seq":1}`, `{"stream":"SLUICE","seq":99,"duplicate": true}`,
		`{"stream":"SLUICE","seq":1 }`, `{"stream":"SLUICE","seq":` + strconv.FormatUint(1<<62, 10) + `}`} {
		f.Add([]byte(s))
	}
	p := ackPublisher()
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, ok := p.ackSeq(data)
		if !ok {
			return
		}
		var ack pubAck
		if err := json.Unmarshal(data, &ack); err != nil {
			t.Fatalf("ackSeq read %q as %d; encoding/json: %v", data, seq, err)
		}
		if ack.Seq != seq || ack.Stream != "SLUICE" || ack.Error != nil {
			t.Fatalf("ackSeq read %q as %d; encoding/json as %+v", data, seq, ack)
		}
	})
}
