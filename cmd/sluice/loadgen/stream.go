package loadgen

import "slices"

// maxMissing bounds the gaps a stream remembers. Past it the oldest gap is
// given up: it stays counted as lost, and should it still arrive it counts
// as a duplicate. Only a server losing thousands of messages per
// subscriber gets there.
const maxMissing = 4096

// Arrival classifies one received message of a stream.
type Arrival uint8

// Arrivals, as Stream.Observe reports them.
const (
	// InOrder is the next message expected.
	InOrder Arrival = iota
	// Ahead skipped at least one message: the skipped ones are missing
	// until they arrive (Late) or the run ends (lost).
	Ahead
	// Late filled a gap: it was reordered.
	Late
	// Duplicate was already received.
	Duplicate
)

// Stream is what one subscriber knows of one publisher's messages on its
// channel: the sequence numbers received, as the next one expected plus
// the gaps below it. It is not safe for concurrent use.
type Stream struct {
	next      uint64   // the next sequence number expected; 0 means 1
	missing   []uint64 // sequence numbers below next not received, ascending
	given     uint64   // gaps given up past maxMissing
	dups      uint64
	reordered uint64
}

// Observe records the arrival of sequence number seq (from 1).
func (s *Stream) Observe(seq uint64) Arrival {
	if s.next == 0 {
		s.next = 1
	}
	switch {
	case seq == s.next:
		s.next++
		return InOrder
	case seq > s.next:
		first := s.next
		if gap := seq - s.next; gap > maxMissing {
			s.given += gap - maxMissing
			first = seq - maxMissing
		}
		for m := first; m < seq; m++ {
			if len(s.missing) == maxMissing {
				s.missing = slices.Delete(s.missing, 0, 1)
				s.given++
			}
			s.missing = append(s.missing, m)
		}
		s.next = seq + 1
		return Ahead
	}
	if i, found := slices.BinarySearch(s.missing, seq); found {
		s.missing = slices.Delete(s.missing, i, i+1)
		s.reordered++
		return Late
	}
	s.dups++
	return Duplicate
}

// Has reports whether sequence number seq arrived. Of the gaps given up
// past maxMissing, which are not remembered, it says no.
func (s *Stream) Has(seq uint64) bool {
	if seq == 0 || seq >= max(s.next, 1) {
		return false
	}
	if _, missing := slices.BinarySearch(s.missing, seq); missing {
		return false
	}
	return s.given == 0 || (len(s.missing) > 0 && seq > s.missing[0])
}

// Received returns how many distinct messages arrived.
func (s *Stream) Received() uint64 {
	if s.next == 0 {
		return 0
	}
	return s.next - 1 - uint64(len(s.missing)) - s.given
}

// Missing returns how many messages below the newest received have not
// arrived (yet).
func (s *Stream) Missing() uint64 { return uint64(len(s.missing)) + s.given }

// Duplicates returns how many messages arrived more than once.
func (s *Stream) Duplicates() uint64 { return s.dups }

// Reordered returns how many messages arrived after a later one.
func (s *Stream) Reordered() uint64 { return s.reordered }

// Lost returns how many of the published messages (numbered 1 to
// published) never arrived.
func (s *Stream) Lost(published uint64) uint64 {
	if r := s.Received(); r < published {
		return published - r
	}
	return 0
}
