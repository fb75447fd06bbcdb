package rtm

import "unicode/utf8"

// MaxChannelLen is the longest channel name in bytes.
const MaxChannelLen = 256

// Errors of channel-name validation; each is an invalid_format for the
// client (see ChannelFormatError).
var (
	ErrChannelEmpty   error = &channelError{"channel name is empty"}
	ErrChannelLong    error = &channelError{"channel name is longer than 256 bytes"}
	ErrChannelUTF8    error = &channelError{"channel name is not valid UTF-8"}
	ErrChannelControl error = &channelError{"channel name contains a control character"}
)

// channelError is a reason a channel name is invalid. Its text carries the
// package's prefix; the reason alone is what a client is answered with.
type channelError struct{ reason string }

func (e *channelError) Error() string { return "rtm: " + e.reason }

// HeartbeatChannel is the JS SDK's keep-alive channel: publishing to it
// always succeeds and stores nothing.
const HeartbeatChannel = "$heartbeat"

// ValidateChannel checks a channel name: 1 to 256 bytes of UTF-8 without
// control characters. The error is one of the ErrChannel values.
func ValidateChannel(name string) error {
	if name == "" {
		return ErrChannelEmpty
	}
	if len(name) > MaxChannelLen {
		return ErrChannelLong
	}
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return ErrChannelControl
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && size == 1 {
			return ErrChannelUTF8
		}
		if r >= 0x80 && r <= 0x9f { // C1 controls
			return ErrChannelControl
		}
		i += size
	}
	return nil
}

// ChannelFormatError checks a channel name as ValidateChannel does and
// returns the invalid_format error the edge answers a bad one with, whose
// reason is the ErrChannel value's text without the "rtm: " prefix; nil
// for a valid name.
func ChannelFormatError(name string) *Error {
	err := ValidateChannel(name)
	if err == nil {
		return nil
	}
	return &Error{Code: CodeInvalidFormat, Reason: err.(*channelError).reason} // ValidateChannel returns no other kind
}

// IsReserved reports whether a channel name is reserved for the edge
// (starts with '$'); clients use one only where a role grants it.
func IsReserved(name string) bool { return len(name) > 0 && name[0] == '$' }
