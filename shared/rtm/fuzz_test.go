package rtm_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/rtm"
)

func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{"0:0", "1:2", "18446744073709551615:18446744073709551615", "18446744073709551616:0",
		"", ":", "1:", "+1:2", "1:2:3", "01:02", "a:b", "-0:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := rtm.ParsePosition(s)
		if pb, errb := rtm.ParsePositionBytes([]byte(s)); pb != p || (errb == nil) != (err == nil) {
			t.Fatalf("ParsePositionBytes(%q) = %+v, %v; ParsePosition: %+v, %v", s, pb, errb, p, err)
		}
		if e, o, ok := strings.Cut(s, ":"); ok && err == nil {
			// The reference: strconv, on what the parser took as digits.
			we, err1 := strconv.ParseUint(e, 10, 64)
			wo, err2 := strconv.ParseUint(o, 10, 64)
			if err1 != nil || err2 != nil || p != (rtm.Position{Epoch: we, Offset: wo}) {
				t.Fatalf("ParsePosition(%q) = %+v; strconv says %d, %v and %d, %v", s, p, we, err1, wo, err2)
			}
		}
		if err != nil {
			if !errors.Is(err, rtm.ErrPositionFormat) || p != (rtm.Position{}) {
				t.Fatalf("ParsePosition(%q) = %+v, %v", s, p, err)
			}
			return
		}
		text := p.String()
		back, err := rtm.ParsePosition(text)
		if err != nil || back != p {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, p, text, back, err)
		}
		if back.String() != text || back.Compare(p) != 0 {
			t.Fatalf("%q does not format stably", s)
		}
	})
}

func FuzzValidateChannel(f *testing.F) {
	for _, s := range []string{"chat", "", "a\x00", "\u0085", "\xff", "$sys", "ü😀", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := rtm.ValidateChannel(s)
		want := len(s) > 0 && len(s) <= rtm.MaxChannelLen && utf8.ValidString(s)
		for _, r := range s {
			if unicode.IsControl(r) {
				want = false
			}
		}
		if (err == nil) != want {
			t.Fatalf("ValidateChannel(%q) = %v, want valid %v", s, err, want)
		}
	})
}
