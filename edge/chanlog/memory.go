package chanlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Memory is the log of an edge alone: its store. Every answer is the
// store's, at once; nothing waits.
type Memory struct {
	st *store.Store
}

// NewMemory returns the log that st is.
func NewMemory(st *store.Store) *Memory { return &Memory{st: st} }

// memChannel appends to a channel of the store through its handle.
type memChannel struct{ h *store.Channel }

// Channel returns a handle of key.
func (m *Memory) Channel(key string) Channel { return memChannel{m.st.Channel(key)} }

// Append stores msg at once.
func (c memChannel) Append(msg Message) (rtm.Position, *Pending, error) {
	pos, err := c.h.AppendFrom(msg.Origin, msg.Payload, msg.Limit)
	return pos, nil, err
}

// AppendIf appends w under the channel's writer lock, in one step with
// the check of its condition.
func (m *Memory) AppendIf(_ context.Context, key string, w Write, buf []byte) (rtm.Position, store.Prior, error) {
	var expect *rtm.Position
	if w.Compare {
		expect = &w.Expect
	}
	return m.st.Channel(key).AppendIfFrom(w.Origin, w.Payload, w.Limit, expect, buf)
}

// Fire appends payload if key's newest message is at at. No channel
// limit: the channel held the arming publish; if it was forgotten since,
// the position does not match and nothing is made.
func (m *Memory) Fire(_ context.Context, key string, at rtm.Position, payload []byte) error {
	_, _, err := m.st.Channel(key).AppendIf(payload, 0, &at, nil)
	return err
}

// Purge drops key's messages.
func (m *Memory) Purge(_ context.Context, key string, buf []byte) (store.Prior, error) {
	return m.st.Purge(key, buf)
}

// Read reads the store. A channel the store does not hold answers 0:0,
// which names no message, rather than be created: reads of missing
// channels leave nothing behind.
func (m *Memory) Read(_ context.Context, key string, at *rtm.Position) (Reading, error) {
	f, found, err := m.st.Read(key, at)
	if err != nil {
		return Reading{}, err
	}
	next, _ := m.st.Peek(key)
	r := Reading{Frame: f, Found: found, Position: next}
	switch {
	case found:
		r.Position = rtm.Position{Epoch: next.Epoch, Offset: f.Offset}
	case at != nil:
		r.Position = *at
	}
	return r, nil
}

// Subscribe opens a cursor of the store.
func (m *Memory) Subscribe(_ context.Context, key string, start store.Start) (*store.Cursor, *CatchUp, error) {
	cur, err := m.st.Subscribe(key, start)
	return cur, nil, err
}

// Oldest opens a cursor at the oldest message the store holds.
func (m *Memory) Oldest(_ context.Context, key string) (*store.Cursor, *CatchUp, error) {
	cur, err := m.st.Subscribe(key, store.Start{HistoryCount: 1 << 30})
	return cur, nil, err
}

// History reads a page through a cursor closed before it returns.
func (m *Memory) History(_ context.Context, key string, at *rtm.Position, count, limit int, page func([]store.Frame, uint64, bool) error) error {
	if at == nil && !m.st.Has(key) {
		// Subscribe would create the channel; there is nothing to read.
		return page(nil, 0, false)
	}
	c, err := m.st.Subscribe(key, store.Start{Position: at, HistoryCount: count})
	if err != nil {
		return err
	}
	defer c.Close()
	// One more than the page, to know whether another page follows.
	frames, err := c.Read(make([]store.Frame, 0, limit+1), 0)
	if errors.Is(err, store.ErrOutOfSync) {
		return store.ErrExpired // deleted under the read
	}
	if err != nil {
		return fmt.Errorf("chanlog: history of %q: %w", key, err)
	}
	return page(frames[:min(len(frames), limit)], c.Position().Epoch, len(frames) > limit)
}

// OnSwitch does nothing: no other edge arms a switch.
func (m *Memory) OnSwitch(func(string, rtm.Position, time.Time, int64, []byte, bool)) {}

// Ready returns nil: the store always serves.
func (m *Memory) Ready() error { return nil }

// Windows are zero: nothing waits, and the store keeps what the
// channels' rules do.
func (m *Memory) Windows() Windows { return Windows{} }

// Watch does nothing: the store is the log, every channel in it.
func (m *Memory) Watch(context.Context, string, int) (func(), bool, error) {
	return func() {}, false, nil
}

// Channels lists the store's channels.
func (m *Memory) Channels(_ context.Context, prefix, after string, limit int) ([]string, bool, error) {
	keys, more := m.st.ChannelNames(prefix, after, limit)
	return keys, more, nil
}
