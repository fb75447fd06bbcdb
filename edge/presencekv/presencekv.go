// Package presencekv makes presence (edge/presence) cluster-wide: each
// edge writes who is present on it into a JetStream key-value bucket and
// reads what the other edges write there into its own registry, so that
// a channel's members, counts, joins and leaves are the same on every
// edge.
//
// Keys (every token in unpadded base64url, which any room or user id
// fits):
//
//	m.NODE.ROOM.USER   {"c": connections, "i": info}: NODE's connections of USER in ROOM; deleted at 0
//	n.NODE             NODE's heartbeat, written every Heartbeat
//
// NODE is an id drawn at random when the edge starts, so that a restarted
// edge is a new node and its old incarnation's members leave. A node
// whose heartbeat has not been seen for TTL is gone (crashed, or cut off
// from the cluster): its members leave every other edge's rooms, and the
// edge that noticed deletes its keys. So a crashed edge's members leave
// within TTL plus one Heartbeat. An edge that finds its own heartbeat key
// deleted (it was thought gone) writes everything it holds again.
//
// Anonymous connections are counted on their own edge only.
package presencekv

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/presence"
	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
)

// Defaults of Options.
const (
	DefaultBucket    = "SLUICE_PRESENCE"
	DefaultHeartbeat = 2 * time.Second
	DefaultTTL       = 10 * time.Second
)

// Options configure a Sync. A nil *Options, and every zero field, means
// the default.
type Options struct {
	// Bucket names the key-value bucket; default SLUICE_PRESENCE.
	Bucket string
	// Replicas of the bucket (as the journal's stream: 3 in a three-node
	// cluster); default 1. An existing bucket keeps its own.
	Replicas int
	// Heartbeat is how often this edge says it is alive; default 2s.
	Heartbeat time.Duration
	// TTL is how long an edge may stay silent before it is taken for
	// gone and its members leave; default 10s. At least twice Heartbeat.
	TTL time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Sync keeps a registry's members in a bucket and the other edges'
// members in the registry. Close stops it.
type Sync struct {
	kv   jetstream.KeyValue
	reg  *presence.Registry
	node string
	hb   time.Duration
	ttl  time.Duration
	log  *slog.Logger

	mu      sync.Mutex         // guards the fields below; taken under the registry's locks (onLocal)
	local   map[string][]byte  // key -> value of what this edge holds
	dirty   map[string]bool    // keys of local to write (or delete, when gone from local)
	nodes   map[string]*remote // the other edges seen
	resync  bool               // write all of local again
	wake    chan struct{}      // capacity 1: dirty has keys
	cancel  context.CancelFunc
	done    sync.WaitGroup
	closing sync.Once
}

// remote is another edge as seen in the bucket.
type remote struct {
	seen time.Time           // when its heartbeat was last seen
	keys map[string]struct{} // its member keys
}

// Start opens (creating if need be) the bucket on nc's JetStream, reads
// what the other edges hold into reg and starts keeping reg's local
// members in the bucket. It must be called before reg is used.
func Start(ctx context.Context, nc *nats.Conn, reg *presence.Registry, opts *Options) (*Sync, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Bucket == "" {
		o.Bucket = DefaultBucket
	}
	o.Replicas = max(o.Replicas, 1)
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.TTL < 2*o.Heartbeat {
		return nil, fmt.Errorf("presencekv: ttl %v is less than twice the heartbeat %v", o.TTL, o.Heartbeat)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("presencekv: %w", err)
	}
	kv, err := openBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket: o.Bucket, Description: "who is present in which channel, per edge (sluice)",
		History: 1, Replicas: o.Replicas, Storage: jetstream.FileStorage,
	}, o.Logger)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	s := &Sync{
		kv: kv, reg: reg, node: hex.EncodeToString(id), hb: o.Heartbeat, ttl: o.TTL, log: o.Logger,
		local: map[string][]byte{}, dirty: map[string]bool{}, nodes: map[string]*remote{},
		wake: make(chan struct{}, 1),
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	w, err := watchBucket(ctx, wctx, kv, o.Logger)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("presencekv: watch bucket %s: %w", o.Bucket, err)
	}
	// The bucket as it is, before this edge serves: a client's first
	// presence is the cluster's.
	if err := s.initial(ctx, w); err != nil {
		cancel()
		_ = w.Stop()
		return nil, err
	}
	// Edges whose last heartbeat is older than the ttl (this edge's own
	// previous run, after a crash) are gone already: their members must
	// not show for a heartbeat.
	s.reap(ctx)
	reg.SetOnLocal(s.onLocal)
	s.beat(wctx)
	s.done.Add(2)
	go s.watch(w)
	go s.write(wctx)
	return s, nil
}

// openBucket opens or creates the bucket, trying again until ctx ends: a
// cluster that is forming, or electing a leader, answers nothing for a
// few seconds.
func openBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig, log *slog.Logger) (jetstream.KeyValue, error) {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		kv, err := js.KeyValue(actx, cfg.Bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			kv, err = js.CreateKeyValue(actx, cfg)
		}
		cancel()
		if err == nil {
			return kv, nil
		}
		log.Warn("waiting for JetStream", "bucket", cfg.Bucket, "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("presencekv: open bucket %s: %w (last error: %v)", cfg.Bucket, ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// watchBucket starts the watch of every key, living as long as wctx,
// trying again until ctx ends: after a node's restart (kill -9 of a
// cluster's edge) JetStream may take a while to answer the consumer
// creation a watch needs, and an edge that exited then (1 restart in 59
// in a chaos run) would not have come back at all.
func watchBucket(ctx, wctx context.Context, kv jetstream.KeyValue, log *slog.Logger) (jetstream.KeyWatcher, error) {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		w, err := kv.WatchAll(wctx)
		if err == nil {
			return w, nil
		}
		log.Warn("waiting for JetStream", "bucket", kv.Bucket(), "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// Node returns this edge's node id in the bucket.
func (s *Sync) Node() string { return s.node }

// Close stops the Sync and deletes this edge's keys, so that its members
// leave the other edges at once rather than after TTL. Idempotent.
func (s *Sync) Close() {
	s.closing.Do(func() {
		s.cancel()
		s.done.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.mu.Lock()
		keys := make([]string, 0, len(s.local)+1)
		for k := range s.local {
			keys = append(keys, k)
		}
		s.mu.Unlock()
		keys = append(keys, heartbeatKey(s.node))
		for _, k := range keys {
			if err := s.kv.Delete(ctx, k); err != nil {
				s.log.Warn("presencekv: keys not deleted at close; the other edges drop them after the ttl", "err", err)
				return
			}
		}
	})
}

// onLocal implements the registry's SetOnLocal: it notes the change for
// the writer. The registry's shard lock is held.
func (s *Sync) onLocal(room, user string, info any, conns int) {
	k := memberKey(s.node, room, user)
	s.mu.Lock()
	if conns <= 0 {
		delete(s.local, k)
	} else {
		s.local[k] = memberValue(info, conns)
	}
	s.dirty[k] = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// encode is unpadded base64url: any bytes, as one key token.
var encode = base64.RawURLEncoding

func memberKey(node, room, user string) string {
	return "m." + node + "." + encode.EncodeToString([]byte(room)) + "." + encode.EncodeToString([]byte(user))
}

func heartbeatKey(node string) string { return "n." + node }

// entry is a member key's value.
type entry struct {
	C    int             `json:"c"`
	Info json.RawMessage `json:"i,omitempty"`
}

func memberValue(info any, conns int) []byte {
	e := entry{C: conns}
	if info != nil {
		if b, err := (jsoncodec.Codec{}).AppendValue(nil, info); err == nil {
			e.Info = b
		}
	}
	b, _ := json.Marshal(&e)
	return b
}

// parseKey splits a key into its kind ('m' or 'n'), node, room and user.
func parseKey(key string) (kind byte, node, room, user string, ok bool) {
	parts := strings.Split(key, ".")
	switch {
	case len(parts) == 2 && parts[0] == "n":
		return 'n', parts[1], "", "", true
	case len(parts) == 4 && parts[0] == "m":
		r, err1 := encode.DecodeString(parts[2])
		u, err2 := encode.DecodeString(parts[3])
		if err1 != nil || err2 != nil {
			return 0, "", "", "", false
		}
		return 'm', parts[1], string(r), string(u), true
	}
	return 0, "", "", "", false
}
