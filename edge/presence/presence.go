// Package presence keeps who is in each channel of an edge: the members
// (users, by user id), how many connections each has there, and the
// connections without a user id (anonymous), and tells the channel's
// watchers when a member joins or leaves.
//
// A user with several connections in a channel is one member: it joins
// with its first connection and leaves with its last, so a reconnecting
// tab or a second device sends no event. Counts are kept as members come
// and go, so Stats is O(1) however large the room; Members pages through
// a room in user id order.
//
// A newcomer watching a room gets its first members in user id order
// (Watcher.PresenceSnapshot, at most SnapshotPage), then every later
// change (PresenceChanged): a snapshot and deltas, never one event per
// existing member. Both are called under the room's lock, in the order
// the changes were made, so a watcher sees a consistent history: nothing
// between the snapshot and the first delta is lost or repeated. A room
// larger than the snapshot is paged with MembersFunc, whose function runs
// under the same lock: a page is the room as it is between two of the
// changes the watcher hears, so the snapshot, the pages and the changes
// queued in that order make up the room exactly.
//
// In a cluster, other edges' members come in through SetRemote (one
// node's connection count of one user) and leave with DropNode when that
// node is gone; a member's connections are the sum over the nodes.
//
// Locks: the registry is sharded by room; a shard's mutex guards its
// rooms, and watchers are called with it held. Nothing else is locked
// inside, so a caller's lock taken in a watcher must never be held while
// calling the registry (the edge's conn.mu is taken in watchers; the edge
// calls the registry without it).
package presence

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
)

// Defaults and bounds.
const (
	// SnapshotPage is the most members of the snapshot a watch begins
	// with; a watcher pages the rest with Members or MembersFunc.
	SnapshotPage = 500
	// DefaultPage is the members of a Members page when no limit is
	// given; MaxPage the most one page holds.
	DefaultPage = 100
	MaxPage     = 1000
)

// Kind says what an Event is.
type Kind uint8

// The kinds of Event.
const (
	Join Kind = iota + 1
	Leave
	// Count: an anonymous connection came or went; only the counts
	// changed (Member is empty).
	Count
)

// String returns the kind's name on the wire: "join", "leave" or "count".
func (k Kind) String() string {
	switch k {
	case Join:
		return "join"
	case Leave:
		return "leave"
	}
	return "count"
}

// Member is one user present in a room.
type Member struct {
	UserID string
	// Info is what the user's first connection in the room said about
	// the user (from its token or the app's connect hook), a value of the
	// rtm data model; nil for none.
	Info any
	// Connections is how many of the user's connections are in the room,
	// over every node of a cluster.
	Connections int
}

// Event is one change of a room, given to its watchers. The registry
// reuses it after the call: a watcher keeps nothing of it but what it
// copies (Memo's frames included, which it may keep).
type Event struct {
	Room   string
	Kind   Kind
	Member Member
	// Users and Connections are the room's counts after the change.
	Users, Connections int
	// Memo lets watchers of one codec share the frame they encode for
	// the event; the registry clears it before each event.
	Memo [4]Memo
}

// Memo is a frame a watcher encoded for an Event, and the key (such as a
// subscription id) it depends on.
type Memo struct {
	Key   string
	Frame []byte
}

// Watcher receives a room's changes. Its methods are called with the
// room's shard locked: they must be quick, must not block and must not
// call the registry.
type Watcher interface {
	// PresenceSnapshot receives the room's first members in user id
	// order when the watch begins, at most SnapshotPage of them (the
	// slice is the registry's: copy what is kept); more says the room
	// has more, which the watcher pages with MembersFunc after the last
	// one, in order with the changes it hears. users and conns are the
	// room's counts. It is called once, with no members for an empty
	// room.
	PresenceSnapshot(room string, members []Member, more bool, users, conns int)
	// PresenceChanged receives each join and leave after the snapshot,
	// and each change of the anonymous connections (Count).
	PresenceChanged(ev *Event)
}

// Registry holds the rooms of an edge. The zero value is not usable; use
// New. It is safe for concurrent use.
type Registry struct {
	seed   maphash.Seed
	shards [numShards]shard
	// onLocal, set once before use (SetOnLocal), hears every change of a
	// user's connections on this edge, for a cluster's other edges.
	onLocal func(room, user string, info any, conns int)
	// local counts this edge's own presence (Totals); Add and Remove
	// change it with the room's shard locked.
	local struct{ members, conns atomic.Int64 }
}

// SetOnLocal makes fn hear, with the room's lock held, every change of a
// user's connection count on this edge (0: none left): what a cluster
// tells the other edges. fn must not block nor call the registry. Call it
// before the registry is used.
func (r *Registry) SetOnLocal(fn func(room, user string, info any, conns int)) { r.onLocal = fn }

const numShards = 64

// shard holds the rooms whose name hashes to it.
type shard struct {
	mu    sync.Mutex // guards rooms, the rooms themselves and ev
	rooms map[string]*room
	ev    Event // reused for every event of the shard, under mu
	page  []Member
	// free keeps members that left for the next to join, so that
	// churn in a room does not allocate.
	free []*member
}

// maxFree bounds a shard's free members.
const maxFree = 256

// newMemberLocked returns a member with info, reused if one is free.
func (sh *shard) newMemberLocked(info any) *member {
	if n := len(sh.free); n > 0 {
		m := sh.free[n-1]
		sh.free[n-1] = nil
		sh.free = sh.free[:n-1]
		m.info = info
		return m
	}
	return &member{info: info}
}

// freeLocked recycles a member that left, once its event is sent.
func (sh *shard) freeLocked(m *member) {
	if len(sh.free) < maxFree {
		remote := m.remote
		clear(remote)
		*m = member{remote: remote}
		sh.free = append(sh.free, m)
	}
}

// room is one channel's presence.
type room struct {
	users    map[string]*member
	conns    int // connections in the room, anonymous ones included
	anon     int // anonymous connections in the room
	watchers []Watcher
}

// member is one user's presence in a room: its connections on this edge
// and, in a cluster, on the others.
type member struct {
	info   any
	local  int
	remote map[string]int // node -> connections; nil on a single edge
	total  int
}

// New returns an empty registry.
func New() *Registry {
	r := &Registry{seed: maphash.MakeSeed()}
	for i := range r.shards {
		r.shards[i].rooms = make(map[string]*room)
	}
	return r
}

func (r *Registry) shard(room string) *shard {
	return &r.shards[maphash.String(r.seed, room)%numShards]
}

// roomLocked returns the room, made if create; sh.mu is held.
func (sh *shard) roomLocked(name string, create bool) *room {
	rm := sh.rooms[name]
	if rm == nil && create {
		rm = &room{users: make(map[string]*member)}
		sh.rooms[name] = rm
	}
	return rm
}

// dropIfEmptyLocked forgets a room nobody is in or watches.
func (sh *shard) dropIfEmptyLocked(name string, rm *room) {
	if rm.conns == 0 && len(rm.users) == 0 && len(rm.watchers) == 0 {
		delete(sh.rooms, name)
	}
}

// Add counts one more connection of user (anonymous when "") in room; the
// user joins if it was not there, and Add reports whether it did. info is
// the user's info when it joins.
func (r *Registry) Add(room, user string, info any) (joined bool) {
	sh := r.shard(room)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rm := sh.roomLocked(room, true)
	rm.conns++
	r.local.conns.Add(1)
	if user == "" {
		rm.anon++
		sh.notifyLocked(room, rm, Count, "", nil)
		return false
	}
	m := rm.users[user]
	if m == nil {
		m = sh.newMemberLocked(info)
		rm.users[user] = m
	}
	m.local++
	m.total++
	if m.local == 1 {
		r.local.members.Add(1)
	}
	if r.onLocal != nil {
		r.onLocal(room, user, m.info, m.local)
	}
	if m.total == 1 {
		sh.notifyLocked(room, rm, Join, user, m)
	}
	return m.total == 1
}

// Remove counts one connection of user (anonymous when "") less in room;
// the user leaves with its last connection, and Remove reports whether it
// did. Removing what was not added does nothing.
func (r *Registry) Remove(room, user string) (left bool) {
	sh := r.shard(room)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rm := sh.roomLocked(room, false)
	if rm == nil || rm.conns == 0 {
		return false
	}
	if user == "" {
		if rm.anon == 0 {
			return false
		}
		rm.anon--
		rm.conns--
		r.local.conns.Add(-1)
		sh.notifyLocked(room, rm, Count, "", nil)
		sh.dropIfEmptyLocked(room, rm)
		return false
	}
	m := rm.users[user]
	if m == nil || m.local == 0 {
		return false
	}
	m.local--
	m.total--
	rm.conns--
	r.local.conns.Add(-1)
	if m.local == 0 {
		r.local.members.Add(-1)
	}
	if r.onLocal != nil {
		r.onLocal(room, user, m.info, m.local)
	}
	left = m.total == 0
	if left {
		delete(rm.users, user)
		sh.notifyLocked(room, rm, Leave, user, m)
		sh.freeLocked(m)
	}
	sh.dropIfEmptyLocked(room, rm)
	return left
}

// notifyLocked tells the room's watchers that user joined or left.
func (sh *shard) notifyLocked(name string, rm *room, k Kind, user string, m *member) {
	if len(rm.watchers) == 0 {
		return
	}
	ev := &sh.ev
	*ev = Event{Room: name, Kind: k, Users: len(rm.users), Connections: rm.conns}
	if m != nil {
		ev.Member = Member{UserID: user, Info: m.info, Connections: m.total}
	}
	for _, w := range rm.watchers {
		w.PresenceChanged(ev)
	}
	*ev = Event{}
}

// Watch makes w a watcher of room: it gets the first SnapshotPage members
// now, then every change, until Unwatch.
func (r *Registry) Watch(room string, w Watcher) {
	sh := r.shard(room)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rm := sh.roomLocked(room, true)
	rm.watchers = append(rm.watchers, w)
	page, _ := firstLocked(sh.page[:0], rm, "", SnapshotPage)
	w.PresenceSnapshot(room, page, len(page) < len(rm.users), len(rm.users), rm.conns)
	clear(page)
	sh.page = page[:0]
}

// Unwatch stops w watching room.
func (r *Registry) Unwatch(room string, w Watcher) {
	sh := r.shard(room)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rm := sh.roomLocked(room, false)
	if rm == nil {
		return
	}
	if i := slices.Index(rm.watchers, w); i >= 0 {
		last := len(rm.watchers) - 1
		rm.watchers[i] = rm.watchers[last]
		rm.watchers[last] = nil
		rm.watchers = rm.watchers[:last]
	}
	sh.dropIfEmptyLocked(room, rm)
}

// Stats returns the room's members and connections (anonymous ones
// included), in O(1).
func (r *Registry) Stats(room string) (users, conns int) {
	sh := r.shard(room)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if rm := sh.rooms[room]; rm != nil {
		return len(rm.users), rm.conns
	}
	return 0, 0
}

// Totals are an edge's own presence: the rooms it knows (with members,
// here or on other nodes, or watchers), and its own members and their
// connections over every room (a user in two rooms counts twice;
// anonymous connections count in Connections only).
type Totals struct {
	Rooms, Members, Connections int
}

// Totals returns the edge's presence counts, in O(shards).
func (r *Registry) Totals() Totals {
	t := Totals{Members: int(r.local.members.Load()), Connections: int(r.local.conns.Load())}
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		t.Rooms += len(sh.rooms)
		sh.mu.Unlock()
	}
	return t
}
