package store

import "time"

// Defaults of Options and Retention.
const (
	DefaultTTL            = 60 * time.Second
	DefaultGrace          = 10 * time.Second
	DefaultHistoryCount   = 1
	DefaultHistoryAge     = 6 * time.Hour
	DefaultBlockBytes     = 64 << 10
	DefaultFirstBlock     = 1 << 10
	DefaultChannelBytes   = 64 << 20
	DefaultStoreBytes     = 1 << 30
	DefaultSweepInterval  = time.Second
	DefaultTimeResolution = time.Millisecond
)

// Clock tells the store the time; tests inject a fake one.
type Clock interface{ Now() time.Time }

// Retention says how long a channel's messages stay readable.
type Retention struct {
	// TTL is how long every message is kept at least. Zero or negative
	// means DefaultTTL (60s).
	TTL time.Duration
	// Grace is how long after a block expires (its time is before
	// now - TTL) readers already inside it may finish it; then it is
	// deleted. Zero means DefaultGrace (10s); negative means none.
	Grace time.Duration
	// HistoryCount is how many of the newest messages are kept up to
	// HistoryAge even past TTL (key-value use: the latest value stays
	// readable). Zero means DefaultHistoryCount (1); negative disables it.
	HistoryCount int
	// HistoryAge bounds HistoryCount. Zero means DefaultHistoryAge (6h);
	// negative disables history retention.
	HistoryAge time.Duration
}

// Normalized returns r with the defaults filled in, as a channel applies
// it (a negative Grace is 0; disabled history is zero count and age).
func (r Retention) Normalized() Retention { return r.normalize() }

// normalize fills the zero fields with defaults.
func (r Retention) normalize() Retention {
	if r.TTL <= 0 {
		r.TTL = DefaultTTL
	}
	switch {
	case r.Grace == 0:
		r.Grace = DefaultGrace
	case r.Grace < 0:
		r.Grace = 0
	}
	if r.HistoryCount == 0 {
		r.HistoryCount = DefaultHistoryCount
	}
	if r.HistoryAge == 0 {
		r.HistoryAge = DefaultHistoryAge
	}
	if r.HistoryCount < 0 || r.HistoryAge < 0 {
		r.HistoryCount, r.HistoryAge = 0, 0
	}
	return r
}

// Options configures a Store. A nil *Options, and every zero field, means
// the default.
type Options struct {
	// Clock gives the time; nil means the real clock.
	Clock Clock
	// BlockBytes is the capacity of a full-size block (default 64 KiB, at
	// most ChannelBytes). A frame larger than that gets a block of its own
	// size.
	BlockBytes int
	// FirstBlockBytes is the capacity of a channel's first block (default
	// 1 KiB, at most BlockBytes); each next block doubles up to BlockBytes,
	// so a million quiet channels do not each hold 64 KiB.
	FirstBlockBytes int
	// ChannelBytes bounds the blocks of one channel (default 64 MiB): a
	// new block evicts the channel's oldest ones past it.
	ChannelBytes int64
	// StoreBytes bounds what the whole store holds (default 1 GiB): its
	// blocks and, by a fixed estimate, the structures of its channels and
	// blocks (Stats.Memory). A new block evicts the store's oldest ones
	// past it, in any channel, but never itself; a channel whose last
	// block is evicted is forgotten at once unless a cursor is open on it.
	// Appenders racing may exceed it by a block each until their
	// evictions finish, and channels kept by cursors alone (with no
	// blocks left to evict) count but cannot be evicted.
	StoreBytes int64
	// SweepInterval is how often the background sweeper expires blocks
	// (default 1s). Negative: no sweeper goroutine (tests call Sweep); the
	// notifier goroutine, which wakes waiting cursors, runs regardless.
	SweepInterval time.Duration
	// TimeResolution applies with the real clock and the background
	// goroutine: Append stamps messages with a clock reading refreshed this
	// often (default 1ms), because reading the clock costs more than an
	// append. Negative: read the clock on every append.
	TimeResolution time.Duration
	// Epoch, when not zero, makes the store a replica of a shared log (a
	// cluster's stream): every channel has this epoch, offsets are the
	// log's (given to AppendAt), and a channel created holds the messages
	// appended after it (see SetApplied). Default 0: a standalone store,
	// where each incarnation of a channel gets an epoch of its own.
	Epoch uint64
	// Partitions, when set, makes the store a replica of a log in
	// several partitions (each its own stream, numbered apart): a
	// channel's epoch, offsets and applied offset are its partition's.
	// Epoch is then ignored; Epoch alone is a log of one partition.
	Partitions *Partitions
	// Retention gives a channel's retention when the channel is created;
	// nil means the defaults, and zero fields of its result too.
	Retention func(channel string) Retention
	// Group names the group a channel counts in, for Store.Channels and
	// the limit of Channel.AppendWithin: an edge serving several apps
	// from one store groups channels by app. It is called when a channel
	// is created and must always give a name the same group; groups
	// should be few (each is counted for the store's life). Nil: every
	// channel is in the group "".
	Group func(channel string) string
}

// Partitions are the partitions of the log a replica store holds.
type Partitions struct {
	// Epochs are the partitions' epochs, in partition order.
	Epochs []uint64
	// Of returns the partition of a channel, in [0, len(Epochs)); it
	// must always give a channel the same one. Nil: every channel is in
	// partition 0.
	Of func(channel string) int
}

// of returns channel's partition.
func (p *Partitions) of(channel string) int {
	if p.Of == nil {
		return 0
	}
	return p.Of(channel)
}

// normalize returns a copy of o with the defaults filled in.
func (o *Options) normalize() Options {
	var n Options
	if o != nil {
		n = *o
	}
	if n.BlockBytes <= 0 {
		n.BlockBytes = DefaultBlockBytes
	}
	if n.FirstBlockBytes <= 0 {
		n.FirstBlockBytes = DefaultFirstBlock
	}
	if n.ChannelBytes <= 0 {
		n.ChannelBytes = DefaultChannelBytes
	}
	if n.StoreBytes <= 0 {
		n.StoreBytes = DefaultStoreBytes
	}
	n.BlockBytes = int(min(int64(n.BlockBytes), n.ChannelBytes, n.StoreBytes))
	n.FirstBlockBytes = min(n.FirstBlockBytes, n.BlockBytes)
	if n.SweepInterval == 0 {
		n.SweepInterval = DefaultSweepInterval
	}
	if n.TimeResolution == 0 {
		n.TimeResolution = DefaultTimeResolution
	}
	if n.Partitions == nil && n.Epoch != 0 {
		n.Partitions = &Partitions{Epochs: []uint64{n.Epoch}}
	}
	return n
}

// retention returns the normalized retention of a new channel.
func (o *Options) retention(channel string) Retention {
	if o.Retention == nil {
		return Retention{}.normalize()
	}
	return o.Retention(channel).normalize()
}
