package loadgen

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/codec/cbor"
	codecjson "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/fossil"
)

// valueCodec is what a codec does to a message value on its way through
// the edge and the client.
type valueCodec interface {
	AppendValue(dst []byte, v any) ([]byte, error)
	DecodeBody(body []byte, v any) error
}

// TestFeedSurvivesEveryCodec: a feed message, published as an object in
// any codec and received as one, encodes as JSON to the bytes published,
// so that the subscriber's byte-for-byte check holds for a message that
// arrived intact.
func TestFeedSurvivesEveryCodec(t *testing.T) {
	levels := feedLevels(2048)
	st := Stamp{Publisher: 7, Seq: 123457, Sent: 90 * time.Second}
	p := AppendFeed(nil, st, levels)
	if len(p) < 2048 || len(p) > 2048+64 {
		t.Fatalf("a feed message of %d levels is %d bytes, want about 2048", levels, len(p))
	}
	for name, cd := range map[string]valueCodec{"json": codecjson.Codec{}, "msgpack": msgpack.Codec{}, "cbor": cbor.Codec{}} {
		t.Run(name, func(t *testing.T) {
			var v any
			if err := (codecjson.Codec{}).DecodeBody(p, &v); err != nil {
				t.Fatal(err)
			}
			wire, err := cd.AppendValue(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := cd.DecodeBody(wire, &got); err != nil {
				t.Fatal(err)
			}
			back, err := (codecjson.Codec{}).AppendValue(nil, got)
			if err != nil {
				t.Fatal(err)
			}
			var buf []byte
			if s, err := parseFeed(&feedCache{}, &buf, string(back), levels); err != nil || s != st {
				t.Fatalf("parseFeed = %+v, %v; want %+v\n%s", s, err, st, back)
			}
		})
	}
}

// TestFeedChangesFewBytes: consecutive messages of a channel, from
// different lanes, differ in a few fields, so that a delta between them
// is a small fraction of a message (what --delta measures).
func TestFeedChangesFewBytes(t *testing.T) {
	levels := feedLevels(2048)
	a := AppendFeed(nil, Stamp{Publisher: 1, Seq: 40, Sent: time.Second}, levels)
	b := AppendFeed(nil, Stamp{Publisher: 2, Seq: 41, Sent: time.Second + 3*time.Millisecond}, levels)
	var enc fossil.Encoder
	d := enc.AppendCreate(nil, a, b)
	if len(d) > len(b)/8 {
		t.Errorf("a delta between consecutive messages is %d bytes of %d", len(d), len(b))
	}
}

// TestFeedObject: the object a publisher makes of a feed message without
// decoding it is the one the JSON codec decodes from its bytes, for
// every level being the one that changes; anything else is left to the
// codec.
func TestFeedObject(t *testing.T) {
	levels := feedLevels(2048)
	var buf []byte
	for seq := range uint64(levels + 1) {
		p := AppendFeed(nil, Stamp{Publisher: 3, Seq: 1000 + seq, Sent: time.Duration(seq) * time.Millisecond}, levels)
		var want any
		if err := (codecjson.Codec{}).DecodeBody(p, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := feedObject(&buf, string(p))
		if !ok || !reflect.DeepEqual(any(got), want) {
			t.Fatalf("seq %d: feedObject = %v, %v\nwant %v", seq, got, ok, want)
		}
		bad := append([]byte(nil), p...)
		bad[len(bad)/2]++
		if _, ok := feedObject(&buf, string(bad)); ok {
			t.Fatalf("seq %d: an altered message taken for a feed message", seq)
		}
	}
	for _, other := range []string{"", "{}", `{"id":"x"}`, paddedPayload(Stamp{Seq: 1})} {
		if _, ok := feedObject(&buf, other); ok {
			t.Errorf("feedObject(%.40q) taken for a feed message", other)
		}
	}
}

// TestParseFeedChecksEveryByte: a feed message with any byte altered
// past its stamp, or cut, fails the check, whether the publisher's bytes
// are in the cache or made again; one of its own stamp passes.
func TestParseFeedChecksEveryByte(t *testing.T) {
	levels := feedLevels(512)
	st := Stamp{Publisher: 2, Seq: 9, Sent: time.Second}
	p := AppendFeed(nil, st, levels)
	var kept feedCache
	kept.put(st, string(p))
	for name, cache := range map[string]*feedCache{"made again": {}, "cached": &kept} {
		t.Run(name, func(t *testing.T) {
			var buf []byte
			if got, err := parseFeed(cache, &buf, string(p), levels); err != nil || got != st {
				t.Fatalf("the message as published: %+v, %v", got, err)
			}
			for i := len(feedPrefix) + StampSize; i < len(p); i++ {
				bad := append([]byte(nil), p...)
				bad[i] ^= 1
				if _, err := parseFeed(cache, &buf, string(bad), levels); !errors.Is(err, errCorrupt) {
					t.Fatalf("byte %d altered: parseFeed error %v, want errCorrupt", i, err)
				}
			}
			if _, err := parseFeed(cache, &buf, string(p[:len(p)-1]), levels); !errors.Is(err, errCorrupt) {
				t.Errorf("last byte cut: parseFeed error %v, want errCorrupt", err)
			}
			for _, foreign := range []string{"", `{"id":"zz`, paddedPayload(st)} {
				if _, err := parseFeed(cache, &buf, foreign, levels); !errors.Is(err, errStamp) {
					t.Errorf("parseFeed(%.40q) error %v, want errStamp", foreign, err)
				}
			}
		})
	}
}

// paddedPayload is a padded payload of 128 bytes.
func paddedPayload(st Stamp) string { return string(AppendPayload(nil, st, 128)) }

func TestFeedConfig(t *testing.T) {
	c, err := Config{Scenario: Fanout, Payload: PayloadFeed}.WithDefaults()
	if err != nil || c.MessageBytes != 2048 {
		t.Errorf("feed defaults: %d bytes, %v; want 2048", c.MessageBytes, err)
	}
	if _, err := (Config{Scenario: Fanout, Payload: PayloadFeed, MessageBytes: minFeedBytes - 1}).WithDefaults(); !errors.Is(err, ErrConfig) {
		t.Errorf("feed below one level: %v, want ErrConfig", err)
	}
	if _, err := (Config{Scenario: Fanout, Payload: "zip"}).WithDefaults(); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown payload: %v, want ErrConfig", err)
	}
}
