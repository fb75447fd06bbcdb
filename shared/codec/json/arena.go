package json

import "unsafe"

// The strings of a decoded message are made without an allocation each.
// A string in an interface (a message's values are of type any) costs the
// runtime an allocation for the string's header as well as one for its
// bytes; here the bytes of all the strings of a body share one buffer
// (the arena), and their headers share another, to which the interfaces
// point. The first bytes and headers of a body share a block: for a small
// message, one allocation holds all its strings.
//
// The strings alias the arena (unsafe.String), which is safe because
// nothing writes to bytes once a string was made of them; they keep the
// arena's chunk alive, at most the body's size, so a caller that keeps
// one of them long (a channel name as a map key) keeps a copy
// (strings.Clone), as the edge's store does.

// arenas is the parser's arena of string bytes and headers.
type arenas struct {
	// shared is set while decoding a body that carries message values:
	// its string fields go to the arena too.
	shared bool
	// blocked is set once the block was allocated.
	blocked bool
	arena   []byte
	headers []string
}

// block is the first allocation of a body's strings.
type block struct {
	headers [blockHeaders]string
	bytes   [blockBytes]byte
}

// A block is 320 bytes, one of the runtime's size classes.
const (
	blockHeaders = 8
	blockBytes   = 192
)

// arenaChunk is the most an arena chunk takes beyond the string at hand,
// so that a large body of numbers does not cost a buffer of its size.
const arenaChunk = 4 << 10

// headerChunk is the number of string headers a chunk after the block
// holds.
const headerChunk = 32

func (s *arenas) newBlock() {
	b := new(block)
	s.blocked = true
	s.arena, s.headers = b.bytes[:0:blockBytes], b.headers[:0:blockHeaders]
}

// box returns str in an interface whose header is kept in the headers'
// chunk instead of an allocation of its own.
func (s *arenas) box(str string) any {
	if str == "" {
		return str // the runtime boxes "" without allocating
	}
	if len(s.headers) == cap(s.headers) {
		if !s.blocked {
			s.newBlock()
		} else {
			s.headers = make([]string, 0, headerChunk)
		}
	}
	// Appending within the capacity never moves the chunk, so the
	// headers boxed before stay where their interfaces point.
	s.headers = append(s.headers, str)
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = stringType, unsafe.Pointer(&s.headers[len(s.headers)-1])
	return v
}

// eface is the runtime's layout of an interface without methods
// (runtime.eface): its type, and a pointer to its value. The layout has
// not changed since Go 1; TestFastPathStrings would see it if it did.
type eface struct {
	typ, data unsafe.Pointer
}

// stringType is the type word of a string in an interface.
var stringType = func() unsafe.Pointer {
	var v any = ""
	return (*eface)(unsafe.Pointer(&v)).typ
}()

// text reads a string literal for a string field of a body: into the
// arena for a body that carries message values (shared is set), into a
// string of its own otherwise (a subscription id lives as long as its
// subscription).
func (p *parser) text() (string, error) {
	if p.shared {
		return p.arenaString()
	}
	start := p.i + 1
	end, plain, err := p.scanString()
	if err != nil {
		return "", err
	}
	if plain {
		return string(p.b[start:end]), nil
	}
	buf, err := unescape(make([]byte, 0, end-start), p.b[start:end])
	return string(buf), err
}

// textOrNull reads a string field: a string, or null, which leaves it "".
func (p *parser) textOrNull(dst *string) error {
	switch p.peek() {
	case '"':
		s, err := p.text()
		*dst = s
		return err
	case 'n':
		return p.literal("null")
	}
	return errLibrary
}

// arenaString reads a string literal into the arena.
func (p *parser) arenaString() (string, error) {
	start := p.i + 1
	end, plain, err := p.scanString()
	if err != nil {
		return "", err
	}
	if plain {
		return p.arenaCopy(p.b[start:end]), nil
	}
	p.reserve(end - start) // unescaped text is never longer
	at := len(p.arena)
	if p.arena, err = unescape(p.arena, p.b[start:end]); err != nil {
		return "", err
	}
	return p.seal(at), nil
}

// arenaCopy copies text that needs no unescaping into the arena.
func (p *parser) arenaCopy(text []byte) string {
	if len(text) == 0 {
		return ""
	}
	p.reserve(len(text))
	at := len(p.arena)
	p.arena = append(p.arena, text...)
	return p.seal(at)
}

// reserve makes room for n more bytes in the arena's chunk: the block's
// first, then chunks of their own.
func (p *parser) reserve(n int) {
	if !p.blocked {
		p.newBlock()
	}
	if cap(p.arena)-len(p.arena) < n {
		p.arena = make([]byte, 0, n+min(len(p.b)-p.i, arenaChunk))
	}
}

// seal returns the arena's bytes from at as a string, and caps the chunk
// there so that no later append can write to them.
func (p *parser) seal(at int) string {
	s := p.arena[at:]
	p.arena = p.arena[len(p.arena):len(p.arena):cap(p.arena)]
	return unsafe.String(unsafe.SliceData(s), len(s))
}
