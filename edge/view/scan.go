package view

import (
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// The fields a view reads form a tree of path segments (a.b and a.c
// share the node a). Loading a message walks its top-level map once:
// a key that is in the tree has its value's bytes noted in its slot, or
// is descended into when its node has children; every other value is
// stepped over by wire.Scanner, which checks it. Nothing is decoded
// until an expression asks for a slot's value, and then only that item.

// pathNode is a segment of the field paths of a view.
type pathNode struct {
	key    []byte
	slot   int // the slot of the path ending here; -1 if no field ends here
	kids   []*pathNode
	lo, hi int // the slots of this node and those below it, [lo, hi)

	// The lengths (those under 64) and first bytes of the children's
	// keys, so that maybe turns most keys of a message away at once.
	lens   uint64
	firsts [4]uint64

	// check is set when the field's value may reach a result (it is in
	// the select list, or the view aggregates): wire.Scanner then checks
	// all of it, UTF-8 included. A field only tested by WHERE is checked
	// as skip checks, which is enough to evaluate it safely.
	check bool
}

// span is where a field's msgpack item lies in the message; start is -1
// when the message lacks the field.
type span struct{ start, end int }

var missing = span{-1, -1}

// add returns the node of path below n, adding what is missing.
func (n *pathNode) add(path []string) *pathNode {
	for _, seg := range path {
		var next *pathNode
		for _, k := range n.kids {
			if string(k.key) == seg {
				next = k
				break
			}
		}
		if next == nil {
			next = &pathNode{key: []byte(seg), slot: -1}
			n.kids = append(n.kids, next)
		}
		n = next
	}
	return n
}

// number gives the slots, depth first so that each node's are
// contiguous, starting at next; it returns the next free slot.
func (n *pathNode) number(next int, ends map[*pathNode]bool) int {
	n.lo = next
	for _, k := range n.kids {
		if len(k.key) < 64 {
			n.lens |= 1 << len(k.key)
		}
		if len(k.key) > 0 {
			n.firsts[k.key[0]>>6] |= 1 << (k.key[0] & 63)
		}
	}
	if ends[n] {
		n.slot = next
		next++
	}
	for _, k := range n.kids {
		next = k.number(next, ends)
	}
	n.hi = next
	return next
}

// maybe reports whether n may have a child for key, by its length and
// first byte: loading a message asks it of every key, most of which no
// view reads, so it is small enough to be inlined.
func (n *pathNode) maybe(key []byte) bool {
	if len(key) == 0 || len(key) >= 64 {
		return true // find decides
	}
	return n.lens&(1<<len(key)) != 0 && n.firsts[key[0]>>6]&(1<<(key[0]&63)) != 0
}

// find returns the child of n for key.
func (n *pathNode) find(key []byte) *pathNode {
	for _, k := range n.kids {
		if string(k.key) == string(key) {
			return k
		}
	}
	return nil
}

// load notes where msg holds the view's fields. It is false when msg is
// not one whole msgpack map, or not valid (a length past the end, bad
// UTF-8, an extension, nesting deeper than wire.MaxNesting): such a
// message is dropped.
func (e *Evaluator) load(msg []byte) bool {
	for i := range e.slots {
		e.slots[i] = missing
	}
	e.msg = msg
	e.scratch = e.scratch[:0]
	if cap(e.scratch) > maxScratch {
		e.scratch = nil // what one costly message grew is not kept for the next
	}
	e.left = Budget
	k, n, i, err := wire.Head(msg, 0)
	if err != nil || k != wire.KindMap {
		return false
	}
	if e.v.merges {
		if _, err := e.sc.Skip(msg, 0, 0); err != nil {
			return false
		}
	}
	end, ok := e.scanMap(msg, i, n, &e.v.root, 1)
	return ok && end == len(msg)
}

// scanMap reads the n pairs of a map that starts at b[i], nested depth
// containers deep, under the path node at; it returns the index past
// the map. A key given twice counts once, with its last value, as every
// decoder of the edge reads it.
func (e *Evaluator) scanMap(b []byte, i int, n uint64, at *pathNode, depth int) (int, bool) {
	if n > uint64(len(b)-i)/2 {
		return 0, false // each pair takes two bytes at least
	}
	for ; n > 0; n-- {
		var key []byte
		var ok bool
		if i < len(b) && b[i]&0xe0 == 0xa0 && i+1+int(b[i]&0x1f) <= len(b) { // fixstr: nearly every key
			key, i = b[i+1:i+1+int(b[i]&0x1f)], i+1+int(b[i]&0x1f)
		} else if key, i, ok = readKey(b, i); !ok {
			return 0, false
		}
		var kid *pathNode
		if at.maybe(key) {
			kid = at.find(key)
		}
		if kid == nil {
			if i, ok = skipScalar(b, i); ok {
				continue
			}
			if i, ok = skip(b, i, depth); !ok {
				return 0, false
			}
			continue
		}
		for s := kid.lo; s < kid.hi; s++ {
			e.slots[s] = missing // a key given again replaces all it held
		}
		start := i
		if i, ok = e.scanValue(b, i, kid, depth); !ok {
			return 0, false
		}
		if kid.slot >= 0 {
			e.slots[kid.slot] = span{start, i}
		}
	}
	return i, true
}

// scanValue steps over the value at b[i] of the path node at, descending
// into it when it is a map and at has children.
func (e *Evaluator) scanValue(b []byte, i int, at *pathNode, depth int) (int, bool) {
	if len(at.kids) > 0 {
		k, n, j, err := wire.Head(b, i)
		if err == nil && k == wire.KindMap {
			if depth+1 > wire.MaxNesting {
				return 0, false
			}
			end, ok := e.scanMap(b, j, n, at, depth+1)
			if ok && at.check {
				_, err := e.sc.Skip(b, i, depth)
				ok = err == nil
			}
			return end, ok
		}
	}
	if !at.check {
		return skip(b, i, depth)
	}
	end, err := e.sc.Skip(b, i, depth)
	return end, err == nil
}

// skipScalar steps over an item of a fixed size (nil, booleans,
// numbers) or a short string, in a function small enough to be inlined
// in the loop of scanMap; false (with i unchanged) for the others, which
// are left to skip.
func skipScalar(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	c := b[i]
	n := int(scalarSize[c])
	if c&0xe0 == 0xa0 { // fixstr
		n = 1 + int(c&0x1f)
	}
	if n == 0 || i+n > len(b) {
		return i, false
	}
	return i + n, true
}

// scalarSize is the whole size of each item of a fixed size, by type
// byte; 0 for the others.
var scalarSize = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
			t[c] = 1
		case c == 0xcc || c == 0xd0:
			t[c] = 2
		case c == 0xcd || c == 0xd1:
			t[c] = 3
		case c == 0xca || c == 0xce || c == 0xd2:
			t[c] = 5
		case c == 0xcb || c == 0xcf || c == 0xd3:
			t[c] = 9
		}
	}
	return t
}()

// skip steps over the item at b[i], nested depth containers deep, for a
// field the view does not read. It checks what keeps the walk in bounds
// (lengths, nesting as wire.MaxNesting allows, no extension nor
// reserved byte) but not UTF-8, which costs as much as the rest of the
// walk: the edge's store holds only messages its codecs checked when
// they were published, and the values a view reads or projects are
// checked by wire.Scanner in scanValue.
func skip(b []byte, i, depth int) (int, bool) {
	if j, ok := skipScalar(b, i); ok {
		return j, true
	}
	k, n, j, err := wire.Head(b, i)
	if err != nil {
		return 0, false
	}
	switch k {
	case wire.KindExt:
		return 0, false
	case wire.KindString, wire.KindBinary:
		if n > uint64(len(b)-j) {
			return 0, false
		}
		return j + int(n), true
	case wire.KindArray, wire.KindMap:
		if depth++; depth > wire.MaxNesting {
			return 0, false
		}
		if k == wire.KindMap {
			n *= 2 // n < 1<<32
		}
		if n > uint64(len(b)-j) {
			return 0, false // each item takes a byte at least
		}
		var ok bool
		for ; n > 0; n-- {
			if j, ok = skip(b, j, depth); !ok {
				return 0, false
			}
		}
	}
	return j, true
}

// readKey reads a map key as the edge's decoders do: a string (valid
// UTF-8), binary, or nil for the empty key. Anything else is a fault.
func readKey(b []byte, i int) (key []byte, next int, ok bool) {
	k, n, j, err := wire.Head(b, i)
	if err != nil {
		return nil, 0, false
	}
	switch k {
	case wire.KindNil:
		return nil, j, true
	case wire.KindString, wire.KindBinary:
		if n > uint64(len(b)-j) {
			return nil, 0, false
		}
		key = b[j : j+int(n)]
		if k == wire.KindString && !utf8.Valid(key) {
			return nil, 0, false
		}
		return key, j + int(n), true
	}
	return nil, 0, false
}
