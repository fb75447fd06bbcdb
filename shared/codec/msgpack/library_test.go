package msgpack_test

import (
	"bytes"
	"errors"

	vmsgpack "github.com/vmihailenco/msgpack/v5"

	"github.com/sluicehq/sluice/shared/codec"
)

// libraryDecode decodes a body into v as a Go client using the msgpack
// library would, with the `json` tags of package rtm, and normalizes its
// messages: the oracle of FuzzDecodeBody. The library panics on some
// bodies (a key given twice whose first value it stored in an interface
// field); that is an error here.
func libraryDecode(body []byte, v any) (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("the library panicked")
		}
	}()
	d := vmsgpack.NewDecoder(bytes.NewReader(body))
	d.SetCustomStructTag("json")
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.PeekCode(); err == nil {
		return errors.New("extra data")
	}
	return codec.NormalizeBody(v)
}
