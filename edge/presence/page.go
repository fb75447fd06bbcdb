package presence

import (
	"slices"
	"strings"
)

// Page is one page of a room's members, in user id order.
type Page struct {
	Members            []Member
	Users, Connections int
	// Next is the user id to pass as after for the next page; "" when
	// this page is the last.
	Next string
}

// Members returns up to limit members of room (DefaultPage when limit <=
// 0, at most MaxPage) whose user ids sort after after, in order. It costs
// O(n log limit) in the room's members, with the room locked.
func (r *Registry) Members(room, after string, limit int) Page {
	var p Page
	r.MembersFunc(room, after, limit, func(q *Page) {
		p = *q
		p.Members = slices.Clone(q.Members)
	})
	return p
}

// MembersFunc is Members, but hands the page to fn with the room locked:
// a watcher of the room that queues the page in fn queues it in order
// with the changes it hears (see Watcher). fn must be quick, must not
// block nor call the registry, and must not keep p.Members, which the
// registry reuses.
func (r *Registry) MembersFunc(room, after string, limit int, fn func(p *Page)) {
	if limit <= 0 {
		limit = DefaultPage
	}
	limit = min(limit, MaxPage)
	sh := r.shard(room)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var p Page
	if rm := sh.rooms[room]; rm != nil {
		var more bool
		p.Members, more = firstLocked(sh.page[:0], rm, after, limit)
		p.Users, p.Connections = len(rm.users), rm.conns
		if more {
			p.Next = p.Members[len(p.Members)-1].UserID
		}
	}
	fn(&p)
	clear(p.Members)
	if p.Members != nil {
		sh.page = p.Members[:0]
	}
}

// firstLocked appends to dst[:0] the first limit members of rm, in user
// id order, whose ids sort after after, and reports whether more follow
// them. It keeps the smallest ids seen in a max-heap of at most limit,
// so a page of a large room costs O(n log limit), and no more than the
// page in memory; the shard is locked.
func firstLocked(dst []Member, rm *room, after string, limit int) ([]Member, bool) {
	h := dst[:0]
	more := false
	for user, m := range rm.users {
		if user <= after {
			continue
		}
		if len(h) < limit {
			h = append(h, Member{UserID: user, Info: m.info, Connections: m.total})
			siftUp(h, len(h)-1)
			continue
		}
		more = true
		if user < h[0].UserID {
			h[0] = Member{UserID: user, Info: m.info, Connections: m.total}
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, func(a, b Member) int { return strings.Compare(a.UserID, b.UserID) })
	return h, more
}

// siftUp and siftDown keep h a max-heap by user id.
func siftUp(h []Member, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].UserID >= h[i].UserID {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func siftDown(h []Member, i int) {
	for {
		big, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].UserID > h[big].UserID {
			big = l
		}
		if r < len(h) && h[r].UserID > h[big].UserID {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}
