package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// maxGap is the longest run of zeros written out to join two segments.
// Go's gaps are up to a few KB; a longer one (a large zeroed table)
// stays a gap.
const maxGap = 4096

// WebAssembly section ids and opcodes this file reads.
const (
	sectionData      = 11
	sectionDataCount = 12
	opI32Const       = 0x41
	opEnd            = 0x0b
)

var errFormat = errors.New("not a module wasmpack can read")

// segment is an active data segment of memory 0.
type segment struct {
	offset uint32
	data   []byte
}

func (s segment) end() uint64 { return uint64(s.offset) + uint64(len(s.data)) }

// Pack returns the module with its data segments joined (see maxGap). It
// fails on what it does not expect from Go's linker (a passive segment,
// an offset that is not a constant, overlapping segments) rather than
// guess, and checks that the memory the new segments initialize is the
// old one.
func Pack(mod []byte) ([]byte, error) {
	if len(mod) < 8 || !bytes.Equal(mod[:4], []byte("\x00asm")) {
		return nil, errFormat
	}
	out := append([]byte(nil), mod[:8]...)
	for rest := mod[8:]; len(rest) > 0; {
		id := rest[0]
		size, n := binary.Uvarint(rest[1:])
		if n <= 0 || uint64(len(rest)-1-n) < size {
			return nil, fmt.Errorf("%w: section %d is cut off", errFormat, id)
		}
		whole, body := rest[:1+n+int(size)], rest[1+n:1+n+int(size)]
		rest = rest[len(whole):]
		switch id {
		case sectionDataCount:
			return nil, fmt.Errorf("%w: it has a data count section", errFormat)
		case sectionData:
			segs, err := readSegments(body)
			if err != nil {
				return nil, err
			}
			joined := join(segs)
			if !bytes.Equal(image(segs), image(joined)) {
				return nil, errors.New("joined segments initialize another memory") // a bug of join
			}
			body = writeSegments(joined)
			out = append(out, sectionData)
			out = binary.AppendUvarint(out, uint64(len(body)))
			out = append(out, body...)
		default:
			out = append(out, whole...)
		}
	}
	return out, nil
}

// readSegments reads a data section: active segments of memory 0 at
// constant offsets, returned sorted by offset, which must not overlap.
func readSegments(b []byte) ([]segment, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, fmt.Errorf("%w: bad data section", errFormat)
	}
	b = b[n:]
	segs := make([]segment, 0, min(count, uint64(len(b))))
	for range count {
		// flags 0 (active, memory 0), i32.const offset, end, size, bytes
		if len(b) < 2 || b[0] != 0 || b[1] != opI32Const {
			return nil, fmt.Errorf("%w: a data segment that is not active at a constant offset", errFormat)
		}
		offset, m := readSLEB32(b[2:])
		if m <= 0 || offset < 0 || len(b) < 2+m+1 || b[2+m] != opEnd {
			return nil, fmt.Errorf("%w: a data segment's offset", errFormat)
		}
		b = b[2+m+1:]
		size, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < size {
			return nil, fmt.Errorf("%w: a data segment is cut off", errFormat)
		}
		segs = append(segs, segment{offset: uint32(offset), data: b[k : k+int(size)]})
		b = b[k+int(size):]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: bytes after the data segments", errFormat)
	}
	slices.SortStableFunc(segs, func(x, y segment) int { return int(int64(x.offset) - int64(y.offset)) })
	for i := 1; i < len(segs); i++ {
		if segs[i-1].end() > uint64(segs[i].offset) {
			return nil, fmt.Errorf("%w: overlapping data segments", errFormat)
		}
	}
	return segs, nil
}

// readSLEB32 reads a signed LEB128 of at most 5 bytes (an i32), returning
// its length, or 0 when b does not start with one.
func readSLEB32(b []byte) (int64, int) {
	var v int64
	var shift uint
	for i := 0; i < len(b) && i < 5; i++ {
		v |= int64(b[i]&0x7f) << shift
		shift += 7
		if b[i]&0x80 == 0 {
			if b[i]&0x40 != 0 {
				v -= 1 << shift
			}
			return v, i + 1
		}
	}
	return 0, 0
}

// appendSLEB appends v as a signed LEB128.
func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// join merges segments at most maxGap bytes apart, writing the zeros
// between them.
func join(segs []segment) []segment {
	var out []segment
	for _, s := range segs {
		if last := len(out) - 1; last >= 0 && uint64(s.offset)-out[last].end() <= maxGap {
			gap := int(uint64(s.offset) - out[last].end())
			out[last].data = append(append(out[last].data, make([]byte, gap)...), s.data...)
			continue
		}
		out = append(out, segment{offset: s.offset, data: slices.Clone(s.data)})
	}
	return out
}

// writeSegments encodes a data section's body.
func writeSegments(segs []segment) []byte {
	b := binary.AppendUvarint(nil, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, opI32Const)
		b = appendSLEB(b, int64(int32(s.offset)))
		b = append(b, opEnd)
		b = binary.AppendUvarint(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

// image is the memory the segments initialize, from address 0 to the
// last byte they write.
func image(segs []segment) []byte {
	if len(segs) == 0 {
		return nil
	}
	m := make([]byte, segs[len(segs)-1].end())
	for _, s := range segs {
		copy(m[s.offset:], s.data)
	}
	return m
}
