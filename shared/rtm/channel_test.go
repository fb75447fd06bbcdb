package rtm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

func TestValidateChannel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"simple", "chat", nil},
		{"one byte", "a", nil},
		{"256 bytes", strings.Repeat("x", 256), nil},
		{"256 bytes of unicode", strings.Repeat("ü", 128), nil},
		{"unicode", "チャット.ü-😀", nil},
		{"punctuation and space", "a b/c:d*e$", nil},
		{"reserved", "$sys.stats", nil},
		{"replacement character", "\ufffd", nil},
		{"empty", "", rtm.ErrChannelEmpty},
		{"257 bytes", strings.Repeat("x", 257), rtm.ErrChannelLong},
		{"258 bytes of unicode", strings.Repeat("ü", 129), rtm.ErrChannelLong},
		{"NUL", "a\x00b", rtm.ErrChannelControl},
		{"newline", "a\n", rtm.ErrChannelControl},
		{"unit separator", "\x1f", rtm.ErrChannelControl},
		{"DEL", "a\x7f", rtm.ErrChannelControl},
		{"C1 first", "a\u0080", rtm.ErrChannelControl},
		{"C1 last", "\u009f", rtm.ErrChannelControl},
		{"lone continuation byte", "a\x80", rtm.ErrChannelUTF8},
		{"invalid byte", "\xff", rtm.ErrChannelUTF8},
		{"truncated sequence", "a\xc3", rtm.ErrChannelUTF8},
		{"overlong encoding", "\xc0\xaf", rtm.ErrChannelUTF8},
		{"surrogate", "\xed\xa0\x80", rtm.ErrChannelUTF8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := rtm.ValidateChannel(tc.in); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("ValidateChannel(%q) = %v, want %v", tc.in, err, tc.want)
			}
			// The edge's reply: invalid_format with the same reason.
			e := rtm.ChannelFormatError(tc.in)
			if tc.want == nil && e != nil || tc.want != nil && (e == nil || e.Code != rtm.CodeInvalidFormat || "rtm: "+e.Reason != tc.want.Error()) {
				t.Fatalf("ChannelFormatError(%q) = %v, want invalid_format for %v", tc.in, e, tc.want)
			}
		})
	}
}

func TestIsReserved(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"$sys": true, rtm.HeartbeatChannel: true, "sys$": false, "": false, "chat": false} {
		if got := rtm.IsReserved(in); got != want {
			t.Fatalf("IsReserved(%q) = %v, want %v", in, got, want)
		}
	}
}
