package rtm

import (
	"errors"
	"math"
	"strconv"
)

// ErrPositionFormat is returned for a position string that does not parse.
var ErrPositionFormat = errors.New("rtm: position is not EPOCH:OFFSET")

// Position names one message slot of a channel: EPOCH changes when the
// channel's history is lost, OFFSET strictly increases from one message to
// the next (and may skip values). Its text form is "EPOCH:OFFSET".
type Position struct {
	Epoch  uint64
	Offset uint64
}

// ParsePosition parses "EPOCH:OFFSET", two decimal integers without sign.
func ParsePosition(s string) (Position, error) { return parsePosition(s) }

// ParsePositionBytes is ParsePosition on bytes, without copying them.
func ParsePositionBytes(b []byte) (Position, error) { return parsePosition(b) }

func parsePosition[T string | []byte](s T) (Position, error) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		e, ok1 := parseUint(s[:i])
		o, ok2 := parseUint(s[i+1:])
		if !ok1 || !ok2 {
			return Position{}, ErrPositionFormat
		}
		return Position{Epoch: e, Offset: o}, nil
	}
	return Position{}, ErrPositionFormat
}

// parseUint accepts only ASCII digits (unlike strconv, which takes "+1"),
// 1 to 20 of them, and a value that fits 64 bits.
func parseUint[T string | []byte](s T) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// String returns the text form "EPOCH:OFFSET", allocating only the string
// (it is laid out in a buffer on the stack, which fits the longest).
func (p Position) String() string {
	var b [len("18446744073709551615:18446744073709551615")]byte
	return string(p.AppendText(b[:0]))
}

// AppendText appends the text form to dst without allocating beyond it.
func (p Position) AppendText(dst []byte) []byte {
	dst = strconv.AppendUint(dst, p.Epoch, 10)
	dst = append(dst, ':')
	return strconv.AppendUint(dst, p.Offset, 10)
}

// Compare orders positions of one epoch by offset; it returns -1, 0 or +1.
// Positions of different epochs are ordered by epoch, which only says they
// belong to different histories.
func (p Position) Compare(q Position) int {
	switch {
	case p.Epoch < q.Epoch:
		return -1
	case p.Epoch > q.Epoch:
		return 1
	case p.Offset < q.Offset:
		return -1
	case p.Offset > q.Offset:
		return 1
	}
	return 0
}

// Next returns the position of the slot after p.
func (p Position) Next() Position { return Position{Epoch: p.Epoch, Offset: p.Offset + 1} }
