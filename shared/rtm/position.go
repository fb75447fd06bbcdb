package rtm

import (
	"errors"
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
func ParsePosition(s string) (Position, error) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		e, err1 := parseUint(s[:i])
		o, err2 := parseUint(s[i+1:])
		if err1 != nil || err2 != nil {
			return Position{}, ErrPositionFormat
		}
		return Position{Epoch: e, Offset: o}, nil
	}
	return Position{}, ErrPositionFormat
}

// parseUint accepts only ASCII digits, unlike strconv which takes "+1".
func parseUint(s string) (uint64, error) {
	if s == "" || len(s) > 20 {
		return 0, ErrPositionFormat
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, ErrPositionFormat
		}
	}
	return strconv.ParseUint(s, 10, 64)
}

// String returns the text form "EPOCH:OFFSET".
func (p Position) String() string { return string(p.AppendText(nil)) }

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
