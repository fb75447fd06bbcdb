// Package store keeps each channel's recent messages in memory and lets any
// number of readers follow them while one writer appends, without locks on
// the read path.
//
// # Blocks
//
// A channel's messages live in fixed-capacity byte blocks. A message is
// stored as a frame:
//
//	[length u32][offset u64][time i64][data ...][length u32]
//
// (the trailing length lets a reader step back from the end of a block to
// its newest frame). A message appended with an origin (AppendFrom: the
// edge's exclude_self) has the top bit of its first length set and
// [n u8][origin, n bytes] before its data; the others cost nothing more. Each block has a readable part and a writable part
// separated by its boundary, one atomic integer. The writer copies a frame
// into the writable part, then publishes it with a single atomic store of
// boundary = old + frame length; a frame is never visible half written.
// Readers load the boundary and read everything before it, in parallel with
// the writer and with each other. Bytes before the boundary never change and
// blocks are never reused (the garbage collector reclaims them), so the Data
// of a Frame stays valid for as long as the caller keeps it.
//
// # The block queue
//
// A channel is a queue of blocks from the head (oldest) to the tail (the
// block being written). Each block carries the time of its newest message,
// so times increase from head to tail. When the tail is full the writer
// opens a follow-on block and links it from the old tail (an atomic next
// pointer, which also seals the old tail); a Cursor reading toward the tail
// follows these links without taking any lock.
//
//	   deleted         old (grace)       head                    tail
//	+-----------+    +-----------+    +-----------+    +-------------------+
//	| 1 2 3 4 5 |--->| 6 7 8 9   |--->| 10 11 12  |--->| 13 14 |  writable  |
//	+-----------+    +-----------+    +-----------+    +-------------------+
//	 cursors here     cursors here     new reads and          ^ boundary
//	 are out of       may finish       subscriptions
//	 sync             the block        start here or later
//
// Readers that look a position up (Read, Subscribe) use a copy-on-write
// snapshot of the queue: a binary search over the blocks' first offsets
// finds the block, a scan finds the frame. Offsets strictly increase but may
// skip (in a cluster they are stream sequence numbers), so every frame
// records its own offset and every block counts its frames.
//
// # Expiry with a grace period
//
// One sweeper serves the whole store. With T1 = now - TTL, blocks whose time
// is before T1 become old (unless they hold one of the channel's newest
// HistoryCount messages younger than HistoryAge) and the head moves to the
// first block that is not old: positions before it are expired. Cursors
// already inside an old block may finish it until T2 = T1 - Grace; then the
// block is deleted, and a cursor that had not read it all is out of sync.
// Nobody counts who reads what: time alone decides. The sweeper keeps a
// min-heap of channels by the time of their next expiry event, so its cost
// grows with the blocks it expires, not with channels or messages.
//
// # Channels and epochs
//
// A channel is created by its first Append, Subscribe or Next. Its
// positions are EPOCH:OFFSET, where the epoch is unique to this incarnation
// of the channel (the store's start time in microseconds plus a counter):
// a position from before a restart, or from a channel since forgotten, is
// expired rather than misread. A channel without blocks or cursors is
// forgotten once its newest message (or its creation) is older than
// TTL + Grace, or at once when the store limit evicted its last block;
// an Append racing with that lands in a fresh channel, never in the
// forgotten one.
//
// A Channel handle appends without looking the channel up by name. It
// caches the incarnation and, finding it forgotten (under its lock), swaps
// in the new one, so the handle behaves exactly like Store.Append.
//
// # Memory bounds
//
// Each channel holds at most ChannelBytes of blocks, and the store at most
// StoreBytes of everything it keeps: the blocks' capacity plus a fixed
// estimate for the structures around each block and each channel (with
// its name), so that a flood of one-message channels is bounded as
// surely as one big channel. Past a limit the oldest blocks are deleted
// at once, with no grace (their readers go out of sync): the channel's own
// oldest for the channel limit, the store's oldest (a FIFO of blocks in
// creation order) for the store limit. A channel whose last block the
// store limit took is forgotten there and then if no cursor is open on it
// (else when its last cursor closes), and a deleted block is never left
// as a channel's tail (an empty anchor replaces it), so what the store
// stops counting it also stops holding. A slow reader never makes the
// store buffer more for it.
//
// Options.Group sorts channels into groups (an edge's apps) whose live
// channels are counted; Channel.AppendWithin refuses to create a channel
// past a group's limit (ErrChannelLimit), atomically with the count.
//
// # Waking readers
//
// A reader with nothing to read arms its cursor with a Waker. The writer
// does not wake anyone itself: an append that finds cursors armed marks
// the channel wake-pending and queues it on the store's notifier
// goroutine, which wakes the channel's armed cursors. While the notifier
// is busy, appends to a pending channel only find the mark set, so one
// round wakes each reader once for many messages, and a thousand readers
// cost the publisher nothing.
//
// # Locks
//
// Lock order, outermost first:
//
//	shard.mu -> channel.mu -> { sweeper.mu | fifo.mu }
//	shard.mu -> groups.mu
//	waitList.waking -> waitList.mu
//	notifier.mu
//
// sweeper.mu, fifo.mu, groups.mu, waitList.mu and notifier.mu are leaves:
// none is held while taking another. channel.mu is the writer lock: it
// serializes appends and every change to a channel's queue. The wait
// list's locks and the notifier's are never taken under channel.mu;
// waitList.waking is held by a wake round while it calls Wakers. Readers
// of frames take no lock at all.
package store
