package loadgen

import (
	"errors"
	"time"
)

// StampSize is the length of the stamp that starts every message: 32
// lower-case hex digits, so the payload is a plain ASCII string that every
// codec and every server carries unchanged. It is also the smallest
// message size.
const StampSize = 32

// Stamp is what a message says about itself.
type Stamp struct {
	// Publisher is the index of the publishing connection.
	Publisher uint16
	// Seq numbers the publisher's messages on one channel, from 1.
	Seq uint64
	// Sent is when it was published, on the run's monotonic clock.
	Sent time.Duration
}

// maxSeq is the largest sequence number a stamp holds (12 hex digits).
const maxSeq = 1<<48 - 1

// errStamp reports a payload that does not start with a stamp: a message
// that the generator did not publish.
var errStamp = errors.New("loadgen: message without a stamp")

// padding fills messages past their stamp; it is not all one byte so that
// a transport compressing frames does not make it free.
const padding = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_"

const hexDigits = "0123456789abcdef"

// AppendPayload appends a message of size bytes (at least StampSize)
// starting with s.
func AppendPayload(dst []byte, s Stamp, size int) []byte {
	dst = appendHex(dst, uint64(s.Publisher), 4)
	dst = appendHex(dst, s.Seq&maxSeq, 12)
	dst = appendHex(dst, uint64(s.Sent), 16)
	// Byte i of the message is padding[i%len(padding)], copied a run at a
	// time.
	for i := StampSize; i < size; {
		j := i % len(padding)
		n := min(len(padding)-j, size-i)
		dst = append(dst, padding[j:j+n]...)
		i += n
	}
	return dst
}

// appendHex appends the n low hex digits of v.
func appendHex(dst []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(v>>(4*uint(i)))&0xf])
	}
	return dst
}

// ParseStamp reads the stamp at the start of a payload.
func ParseStamp(p string) (Stamp, error) {
	if len(p) < StampSize {
		return Stamp{}, errStamp
	}
	pub, ok1 := parseHex(p[0:4])
	seq, ok2 := parseHex(p[4:16])
	sent, ok3 := parseHex(p[16:32])
	if !ok1 || !ok2 || !ok3 {
		return Stamp{}, errStamp
	}
	return Stamp{Publisher: uint16(pub), Seq: seq, Sent: time.Duration(sent)}, nil
}

// parseHex decodes lower-case hex digits.
func parseHex(s string) (uint64, bool) {
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
