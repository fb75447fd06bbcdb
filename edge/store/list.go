package store

import (
	"slices"
	"strings"
)

// ChannelNames returns, in byte order, up to limit (> 0) names of the live
// channels (those holding messages or cursors, not yet forgotten) that
// start with prefix and sort after after, and whether more follow: a
// listing paged by passing the last name back as after. It reads every
// shard under its read lock, so it costs O(channels) per call, and keeps
// only limit+1 names meanwhile: a listing for operators and backends,
// never on a publish or delivery path.
func (s *Store) ChannelNames(prefix, after string, limit int) (names []string, more bool) {
	if limit <= 0 {
		return nil, false
	}
	// best holds the limit+1 smallest matching names, sorted.
	best := make([]string, 0, limit+1)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for name := range sh.m {
			if name <= after || !strings.HasPrefix(name, prefix) {
				continue
			}
			if len(best) == limit+1 && name >= best[limit] {
				continue
			}
			at, _ := slices.BinarySearch(best, name)
			if len(best) == limit+1 {
				best = best[:limit]
			}
			best = slices.Insert(best, at, name)
		}
		sh.mu.RUnlock()
	}
	if len(best) > limit {
		return best[:limit], true
	}
	return best, false
}
