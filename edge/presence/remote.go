package presence

// SetRemote sets how many connections user has in room on another node of
// a cluster (0: none), as that node's heartbeat or change said; the user
// joins or leaves when its total over the nodes becomes or stops being
// zero. info is the user's info when it joins.
func (r *Registry) SetRemote(room, node, user string, info any, conns int) {
	if user == "" || node == "" {
		return
	}
	sh := r.shard(room)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rm := sh.roomLocked(room, conns > 0)
	if rm == nil {
		return
	}
	m := rm.users[user]
	if m == nil {
		if conns <= 0 {
			return
		}
		m = sh.newMemberLocked(info)
		rm.users[user] = m
	}
	if m.remote == nil {
		m.remote = make(map[string]int)
	}
	old := m.remote[node]
	if conns <= 0 {
		delete(m.remote, node)
		conns = 0
	} else {
		m.remote[node] = conns
	}
	sh.applyLocked(room, rm, user, m, conns-old)
}

// applyLocked adds delta remote connections to member m of room and sends
// the join or leave it makes; sh.mu is held.
func (sh *shard) applyLocked(name string, rm *room, user string, m *member, delta int) {
	before := m.total
	m.total += delta
	rm.conns += delta
	switch {
	case before == 0 && m.total > 0:
		sh.notifyLocked(name, rm, Join, user, m)
	case before > 0 && m.total == 0:
		delete(rm.users, user)
		sh.notifyLocked(name, rm, Leave, user, m)
		sh.freeLocked(m)
		sh.dropIfEmptyLocked(name, rm)
	case m.total == 0:
		delete(rm.users, user)
		sh.freeLocked(m)
		sh.dropIfEmptyLocked(name, rm)
	}
}

// DropNode removes every connection node had, in every room: its members
// that have no connection elsewhere leave. For a node that is gone.
func (r *Registry) DropNode(node string) {
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		for name, rm := range sh.rooms {
			for user, m := range rm.users {
				if n := m.remote[node]; n > 0 {
					delete(m.remote, node)
					sh.applyLocked(name, rm, user, m, -n)
				}
			}
		}
		sh.mu.Unlock()
	}
}
