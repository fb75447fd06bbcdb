package json_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

func FuzzDecodeJSON(f *testing.F) {
	codectest.Fuzz(f, c, rtm.CodeJSONParseError,
		[]byte(`{"action":"rtm/publish","id":"x","body":{"channel":"c","message":{"a":[1,2.5,"\u00e9",null,true]}}}`),
		[]byte(`{"\u0061ction":"a","id":-1,"body":{"message":1e400}}`),
		[]byte(`{"action":"rtm/subscribe","body":{"channel":"c","history":{"count":1,"age":2},"period":1.5}}`),
		[]byte(`{"action":"a","id":7.0}`),
		[]byte(`{"action":"a","body":{"messages":[18446744073709551615,-9223372036854775808,1e-400]}}`),
		[]byte(`[1,{"action":"a"}]`),
	)
}

// FuzzFastPath is the differential test of the fast paths of Decode and
// DecodeBody: for any bytes as a frame, Decode gives what its library
// path alone gives, and as a body, for every body type, so does
// DecodeBody: the same value, or the same error code and reason. Its
// committed corpus is in testdata/fuzz/FuzzFastPath.
func FuzzFastPath(f *testing.F) {
	for _, b := range fastBodies {
		f.Add([]byte(b.body))
	}
	for _, b := range leftToLibrary {
		f.Add([]byte(b.body))
	}
	for _, frame := range codectest.Seeds(f, c) {
		if env, err := c.Decode(frame); err == nil {
			f.Add(env.Body)
		}
	}
	for _, frame := range codectest.Seeds(f, c) {
		f.Add(frame)
	}
	for _, frame := range fastFrames {
		f.Add([]byte(frame))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameFrameAsLibrary(t, b)
		sameAsLibrary(t, b)
	})
}
