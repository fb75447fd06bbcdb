package wire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// oldField is PDUFields.Field as it was before its three fields shared
// one exit, kept to check that it gives the same envelopes and errors.
func (p *PDUFields) oldField(key, item []byte) error {
	switch string(key) {
	case "action":
		if err := codec.Once(&p.action); err != nil {
			return err
		}
		var ok bool
		if p.env.Action, ok = readAction(item); !ok {
			return rtm.Invalid(rtm.PDUActionType)
		}
	case "id":
		if err := codec.Once(&p.id); err != nil {
			return err
		}
		var ok bool
		if p.env.ID, ok = readID(item); !ok {
			return rtm.Invalid(rtm.PDUIDType)
		}
	case "body":
		if err := codec.Once(&p.body); err != nil {
			return err
		}
		if !IsMap(item) {
			return rtm.Invalid(rtm.PDUBodyType)
		}
		p.env.Body = item
	}
	return nil
}

// FuzzPDUFields reads the pairs of a frame's map, as the codec does, with
// Field and with oldField: each pair gives the same error, and a frame
// whose pairs all pass the same envelope.
func FuzzPDUFields(f *testing.F) {
	f.Add([]byte("\x83\xa6action\xa1a\xa2id\x07\xa4body\x80"))
	f.Add([]byte("\x82\xa6action\xa1a\xa6action\x01"))
	f.Add([]byte("\x82\xa2id\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00\xa2id\xa1x"))
	f.Add([]byte("\x82\xa4body\x90\xa4body\x80"))
	f.Fuzz(func(t *testing.T, frame []byte) {
		k, pairs, i, err := Head(frame, 0)
		if err != nil || k != KindMap {
			return
		}
		var s Scanner
		var p, old PDUFields
		for ; pairs > 0; pairs-- {
			vs, err := s.Skip(frame, i, 1)
			var end int
			if err == nil {
				end, err = s.Skip(frame, vs, 1)
			}
			if err != nil {
				return
			}
			_, _, ks, _ := Head(frame, i)
			key, item := frame[ks:vs], frame[vs:end]
			err, oldErr := p.Field(key, item), old.oldField(key, item)
			if !reflect.DeepEqual(err, oldErr) {
				t.Fatalf("pair %x: %x: Field %v, before %v", key, item, err, oldErr)
			}
			if err != nil {
				return // the codec stops at the first error
			}
			i = end
		}
		env, err := p.Envelope()
		oldEnv, oldErr := old.Envelope()
		if !reflect.DeepEqual(err, oldErr) || env.Action != oldEnv.Action || env.ID != oldEnv.ID || !bytes.Equal(env.Body, oldEnv.Body) {
			t.Fatalf("envelope %+v %v, before %+v %v", env, err, oldEnv, oldErr)
		}
	})
}
