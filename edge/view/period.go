package view

import (
	"errors"
	"time"
)

// The period of an aggregate view: rtm/subscribe's period, in seconds.
const (
	DefaultPeriod = time.Second
	MaxPeriod     = 60 * time.Second
)

// ErrPeriod is a period outside 1 to 60 seconds.
var ErrPeriod = errors.New("view: period must be 1 to 60 seconds")

// Period returns the period an rtm/subscribe asks for with period:
// DefaultPeriod when it gives none (0), else seconds, which must be 1 to
// 60. The edge flushes each aggregate view's Aggregate once per period.
func Period(seconds int64) (time.Duration, error) {
	switch {
	case seconds == 0:
		return DefaultPeriod, nil
	case seconds < 0 || seconds > int64(MaxPeriod/time.Second):
		return 0, ErrPeriod
	}
	return time.Duration(seconds) * time.Second, nil
}
