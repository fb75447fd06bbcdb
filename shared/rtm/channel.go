package rtm

import (
	"errors"
	"unicode/utf8"
)

// MaxChannelLen is the longest channel name in bytes.
const MaxChannelLen = 256

// Errors of channel-name validation; each is an invalid_format for the
// client.
var (
	ErrChannelEmpty   = errors.New("rtm: channel name is empty")
	ErrChannelLong    = errors.New("rtm: channel name is longer than 256 bytes")
	ErrChannelUTF8    = errors.New("rtm: channel name is not valid UTF-8")
	ErrChannelControl = errors.New("rtm: channel name contains a control character")
)

// HeartbeatChannel is the JS SDK's keep-alive channel: publishing to it
// always succeeds and stores nothing.
const HeartbeatChannel = "$heartbeat"

// ValidateChannel checks a channel name: 1 to 256 bytes of UTF-8 without
// control characters.
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

// IsReserved reports whether a channel name is reserved for the edge
// (starts with '$'); clients use one only where a role grants it.
func IsReserved(name string) bool { return len(name) > 0 && name[0] == '$' }
