package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Errors of pattern validation.
var (
	ErrPatternEmpty = errors.New("app: pattern is empty")
	ErrPatternStar  = errors.New("app: '*' may only end a pattern")
)

// ValidatePattern checks a channel pattern: an exact channel name, or a
// prefix followed by one '*' at the end. A '*' anywhere else is refused
// rather than taken literally, so that "a*b" cannot be mistaken for a
// wildcard that grants less (or more) than its author meant.
func ValidatePattern(pattern string) error {
	if pattern == "" {
		return ErrPatternEmpty
	}
	if i := strings.IndexByte(pattern, '*'); i >= 0 && i != len(pattern)-1 {
		return fmt.Errorf("pattern %q: %w", pattern, ErrPatternStar)
	}
	// The prefix of a wildcard, or the whole exact name, follows the
	// channel-name rules; a trailing '*' is a valid channel byte too.
	if err := rtm.ValidateChannel(pattern); err != nil {
		return fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return nil
}

// MatchPattern reports whether a channel matches a pattern: the exact name,
// or a prefix ending in '*'. Reserved channels (starting with '$') match
// only patterns that start with '$' themselves: "*" is every ordinary
// channel, "$*" every reserved one, so granting "*" never exposes the edge's
// own channels. It does not allocate.
func MatchPattern(pattern, channel string) bool {
	n := len(pattern)
	if n == 0 || pattern[n-1] != '*' {
		return pattern == channel
	}
	prefix := pattern[:n-1]
	if rtm.IsReserved(channel) && !rtm.IsReserved(prefix) {
		return false
	}
	return strings.HasPrefix(channel, prefix)
}

// matchAny reports whether any of patterns matches channel.
func matchAny(patterns []string, channel string) bool {
	for _, p := range patterns {
		if MatchPattern(p, channel) {
			return true
		}
	}
	return false
}

// CanPublish reports whether the permissions grant publish (and so write
// and delete) on channel.
func (p Permissions) CanPublish(channel string) bool { return matchAny(p.Publish, channel) }

// CanSubscribe reports whether the permissions grant subscribe (and so
// read) on channel.
func (p Permissions) CanSubscribe(channel string) bool { return matchAny(p.Subscribe, channel) }

// CanPresence reports whether the permissions grant presence on channel:
// its members and counts, and their joins and leaves.
func (p Permissions) CanPresence(channel string) bool { return matchAny(p.Presence, channel) }

// Validate checks every pattern; the error names the offending one as
// "publish[i]", "subscribe[i]" or "presence[i]".
func (p Permissions) Validate() error {
	for i, pat := range p.Publish {
		if err := ValidatePattern(pat); err != nil {
			return fmt.Errorf("publish[%d]: %w", i, err)
		}
	}
	for i, pat := range p.Subscribe {
		if err := ValidatePattern(pat); err != nil {
			return fmt.Errorf("subscribe[%d]: %w", i, err)
		}
	}
	for i, pat := range p.Presence {
		if err := ValidatePattern(pat); err != nil {
			return fmt.Errorf("presence[%d]: %w", i, err)
		}
	}
	return nil
}

// Union returns the permissions granted by p or q, in new slices: neither
// p nor q is modified.
func (p Permissions) Union(q Permissions) Permissions {
	return Permissions{
		Publish:   unionPatterns(p.Publish, q.Publish),
		Subscribe: unionPatterns(p.Subscribe, q.Subscribe),
		Presence:  unionPatterns(p.Presence, q.Presence),
	}
}

// unionPatterns concatenates a and b without duplicates, keeping order.
func unionPatterns(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	seen := make(map[string]struct{}, len(a)+len(b))
	for _, list := range [2][]string{a, b} {
		for _, p := range list {
			if _, dup := seen[p]; dup {
				continue
			}
			seen[p] = struct{}{}
			out = append(out, p)
		}
	}
	return out
}

// CanSubscribePrefix reports whether the permissions grant subscribe on
// every channel whose name starts with prefix: some wildcard pattern's
// prefix is a prefix of it (and, for a reserved prefix, is reserved
// too). Exact names never cover a prefix, so a prefix subscription is
// granted by pattern, once, and not channel by channel as they appear.
func (p Permissions) CanSubscribePrefix(prefix string) bool {
	for _, q := range p.Subscribe {
		n := len(q)
		if n == 0 || q[n-1] != '*' {
			continue
		}
		if pre := q[:n-1]; strings.HasPrefix(prefix, pre) && (!rtm.IsReserved(prefix) || rtm.IsReserved(pre)) {
			return true
		}
	}
	return false
}
