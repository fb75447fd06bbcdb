package presencekv

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
)

// initial applies the bucket's values as they are when the watch starts,
// up to the watcher's nil entry (all initial values received).
func (s *Sync) initial(ctx context.Context, w jetstream.KeyWatcher) error {
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("presencekv: the bucket's watch ended before its initial values")
			}
			if e == nil {
				return nil
			}
			s.apply(e, true)
		case <-ctx.Done():
			return fmt.Errorf("presencekv: reading the bucket: %w", ctx.Err())
		}
	}
}

// watch applies the other edges' changes until the Sync stops.
func (s *Sync) watch(w jetstream.KeyWatcher) {
	defer s.done.Done()
	defer func() { _ = w.Stop() }()
	for e := range w.Updates() {
		if e != nil {
			s.apply(e, false)
		}
	}
}

// apply takes one entry of the bucket into the registry. An initial
// heartbeat counts from when it was written, a live one from now.
func (s *Sync) apply(e jetstream.KeyValueEntry, initial bool) {
	kind, node, room, user, ok := parseKey(e.Key())
	if !ok {
		return
	}
	gone := e.Operation() != jetstream.KeyValuePut
	if node == s.node {
		if kind == 'n' && gone {
			// Another edge took this one for gone and deleted its keys:
			// write them all again.
			s.mu.Lock()
			s.resync = true
			s.mu.Unlock()
			s.signal()
		}
		return
	}
	s.mu.Lock()
	r := s.nodes[node]
	if r == nil {
		if gone {
			s.mu.Unlock()
			return
		}
		// First sight: it has TTL to show a heartbeat.
		r = &remote{seen: time.Now(), keys: map[string]struct{}{}}
		s.nodes[node] = r
	}
	if kind == 'n' {
		if gone {
			delete(s.nodes, node)
			s.mu.Unlock()
			s.reg.DropNode(node)
			return
		}
		r.seen = time.Now()
		if initial {
			r.seen = e.Created()
		}
		s.mu.Unlock()
		return
	}
	conns, info := 0, any(nil)
	if gone {
		delete(r.keys, e.Key())
	} else {
		r.keys[e.Key()] = struct{}{}
		var v entry
		if json.Unmarshal(e.Value(), &v) == nil {
			conns = v.C
			if len(v.Info) > 0 {
				_ = (jsoncodec.Codec{}).DecodeBody(v.Info, &info)
			}
		}
	}
	s.mu.Unlock()
	// Outside s.mu: the registry's lock is taken before s.mu (onLocal).
	s.reg.SetRemote(room, node, user, info, conns)
}

func (s *Sync) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// write writes this edge's changes to the bucket as they come, its
// heartbeat every Heartbeat, and takes silent edges for gone, until ctx
// ends.
func (s *Sync) write(ctx context.Context) {
	defer s.done.Done()
	tick := time.NewTicker(s.hb)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
			s.flush(ctx)
		case <-tick.C:
			s.beat(ctx)
			s.reap(ctx)
			s.flush(ctx) // what failed before is tried again
		}
	}
}

// beat writes the heartbeat.
func (s *Sync) beat(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, s.hb)
	defer cancel()
	if _, err := s.kv.Put(wctx, heartbeatKey(s.node), []byte("1")); err != nil && ctx.Err() == nil {
		s.log.Warn("presencekv: heartbeat not written", "err", err)
	}
}

// flush writes the dirty keys (or all of them, after a resync); a key
// that fails stays dirty for the next try.
func (s *Sync) flush(ctx context.Context) {
	s.mu.Lock()
	if s.resync {
		s.resync = false
		for k := range s.local {
			s.dirty[k] = true
		}
	}
	work := make(map[string][]byte, len(s.dirty))
	for k := range s.dirty {
		work[k] = s.local[k] // nil: gone
	}
	clear(s.dirty)
	s.mu.Unlock()
	for k, v := range work {
		wctx, cancel := context.WithTimeout(ctx, s.hb)
		var err error
		if v == nil {
			err = s.kv.Delete(wctx, k)
		} else {
			_, err = s.kv.Put(wctx, k, v)
		}
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("presencekv: member key not written; retrying", "err", err)
			s.mu.Lock()
			s.dirty[k] = true
			s.mu.Unlock()
		}
	}
}

// reap takes the edges silent for TTL for gone: their members leave, and
// their keys are deleted (by every edge that notices; deleting twice is
// harmless).
func (s *Sync) reap(ctx context.Context) {
	now := time.Now()
	type dead struct {
		node string
		keys []string
	}
	var gone []dead
	s.mu.Lock()
	for node, r := range s.nodes {
		if now.Sub(r.seen) < s.ttl {
			continue
		}
		d := dead{node: node}
		for k := range r.keys {
			d.keys = append(d.keys, k)
		}
		gone = append(gone, d)
		delete(s.nodes, node)
	}
	s.mu.Unlock()
	for _, d := range gone {
		s.log.Info("presencekv: an edge stopped its heartbeat; its members leave", "node", d.node, "members", len(d.keys))
		s.reg.DropNode(d.node)
		for _, k := range append(d.keys, heartbeatKey(d.node)) {
			wctx, cancel := context.WithTimeout(ctx, s.hb)
			err := s.kv.Delete(wctx, k)
			cancel()
			if err != nil {
				break // another edge, or this one at its next reap, deletes the rest
			}
		}
	}
}
