package journal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrPartitions: the log in NATS has another number of partitions than
// Options.Partitions. A log keeps the partitions it was made with: a
// channel's partition, and so the stream its positions number, is fixed
// by its key and their count.
var ErrPartitions = errors.New("journal: the log has another number of partitions")

// ErrOverlap: the stream cannot be made, its subjects overlapping
// another stream's on the NATS server: a log made with another
// cluster.stream or cluster.partitions, or another program's stream.
var ErrOverlap = errors.New("journal: the stream's subjects overlap another stream's")

// errCodeSubjectOverlap is JetStream's error code for a stream whose
// subjects overlap another's (nats-server's JSStreamSubjectOverlapErr),
// which nats.go does not name.
const errCodeSubjectOverlap jetstream.ErrorCode = 10065

// create makes the stream cfg describes; a refusal for overlapping
// subjects is ErrOverlap (retrying cannot help).
func (j *Journal) create(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := j.js.CreateStream(ctx, cfg)
	var api *jetstream.APIError
	if errors.As(err, &api) && api.ErrorCode == errCodeSubjectOverlap {
		return nil, fmt.Errorf("%w: stream %s under %s (%v). Another log is on this NATS: open it with its own "+
			"cluster.stream and cluster.partitions, or delete it with the nats CLI (see docs/cluster.md, \"Partitions\")",
			ErrOverlap, cfg.Name, strings.Join(cfg.Subjects, ","), api.Description)
	}
	return s, err
}

// partitionsKey is the stream metadata that records how many partitions
// the log was made with (absent: made before partitions, one).
const partitionsKey = "sluice_partitions"

// StreamOf is the stream of partition part of the log named base in
// partitions: base itself for a log of one, else base-part.
func StreamOf(base string, partitions, part int) string {
	if partitions <= 1 {
		return base
	}
	return base + "-" + strconv.Itoa(part)
}

// checkPartitions refuses to open a partition of a log made with another
// number of partitions: the stream of one partition (base) beside a
// request for several, partition 0 of several beside a request for one,
// or a partition stream recording another count.
func (j *Journal) checkPartitions(ctx context.Context) error {
	o := &j.opts
	other := StreamOf(o.base, 2, 0) // partition 0 of a log of several (any count over 1), when one is asked for
	if o.Partitions > 1 {
		other = o.base
	}
	if s, err := j.js.Stream(ctx, other); err == nil {
		return j.partitionsError(madeWith(s), other)
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return err
	}
	s, err := j.js.Stream(ctx, o.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if had := madeWith(s); had != strconv.Itoa(o.Partitions) {
		return j.partitionsError(had, o.Stream)
	}
	return nil
}

// madeWith returns the partitions a stream of the log records it was
// made with: "1" for one made before partitions.
func madeWith(s jetstream.Stream) string {
	if had := s.CachedInfo().Config.Metadata[partitionsKey]; had != "" {
		return had
	}
	return "1"
}

// partitionsError says what was found and how to go on.
func (j *Journal) partitionsError(had, stream string) error {
	return fmt.Errorf("%w: cluster.partitions is %d, but the log was made with %s (stream %s found). "+
		"Set cluster.partitions back to what the log was made with; to change it, start the edges with the new "+
		"cluster.partitions and a new cluster.stream name (the channels' history starts afresh; the old streams "+
		"stay until deleted with the nats CLI): see docs/cluster.md, \"Partitions\"",
		ErrPartitions, j.opts.Partitions, had, stream)
}
