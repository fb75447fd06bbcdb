//go:build !js

package websocket

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// deflateLevel is the compression level of every message. BestSpeed:
// the edge compresses on its fan-out path, and the default level saves
// little more for about twice the CPU (BenchmarkDeflateLevel: a 2 KiB
// JSON object to 0.255 of its size instead of 0.281, a chat message to
// 0.81 instead of 0.80).
const deflateLevel = flate.BestSpeed

// deflateTail is what RFC 7692 section 7.2.1 strips from the end of a
// compressed message: the empty stored block a sync flush ends with.
const deflateTail = "\x00\x00\xff\xff"

// inflateTail is appended to a received message before inflating it: the
// stripped empty block (section 7.2.2), then a final empty stored block
// (BFINAL set), so that a whole message ends in io.EOF and a cut-off one
// in an error.
const inflateTail = deflateTail + "\x01\x00\x00\xff\xff"

// keepScratch is the largest compressed-message buffer kept in the pool:
// one large message does not pin its buffer for good.
const keepScratch = 64 << 10

// deflater is a pooled compressor; it appends what the flate writer
// writes to out.
type deflater struct {
	fw  *flate.Writer
	out []byte
}

func (d *deflater) Write(p []byte) (int, error) {
	d.out = append(d.out, p...)
	return len(p), nil
}

// deflaters are shared by every connection of the process: a message is
// compressed in one call to AppendFrame, so a connection holds none.
var deflaters = sync.Pool{New: func() any {
	d := &deflater{}
	fw, err := flate.NewWriter(d, deflateLevel)
	if err != nil {
		panic(fmt.Sprintf("websocket: flate level %d: %v", deflateLevel, err)) // a constant
	}
	d.fw = fw
	return d
}}

// appendDeflated appends payload's compressed bytes to dst. It reports
// false (and returns dst unchanged in length) when they would not be
// shorter than payload: the message is then better sent as it is.
func appendDeflated(dst, payload []byte) ([]byte, bool) {
	d := deflaters.Get().(*deflater)
	defer deflaters.Put(d)
	start := len(dst)
	d.out = dst
	d.fw.Reset(d) // no context takeover: a fresh window for each message
	// Writes to d cannot fail, so neither can the flate writer's.
	_, _ = d.fw.Write(payload)
	_ = d.fw.Flush()
	out := d.out
	d.out = nil
	n := len(out) - start - len(deflateTail)
	if n >= len(payload) || !bytes.HasSuffix(out, []byte(deflateTail)) {
		return out[:start], false
	}
	return out[:start+n], true
}

// inflater is a pooled decompressor with the buffer that collects a
// compressed message's payload.
type inflater struct {
	fr  io.ReadCloser // a flate reader; also a flate.Resetter
	src bytes.Reader
	in  []byte // the compressed message, then inflateTail
	// probe takes the output once the caller's buffer is full.
	probe [512]byte
}

var inflaters = sync.Pool{New: func() any {
	z := &inflater{}
	z.fr = flate.NewReader(&z.src)
	return z
}}

// getInflater takes an inflater for one message.
func getInflater() *inflater {
	z := inflaters.Get().(*inflater)
	z.in = z.in[:0]
	return z
}

// putInflater returns z to the pool, dropping a large buffer.
func putInflater(z *inflater) {
	if cap(z.in) > keepScratch {
		z.in = nil
	}
	z.src.Reset(nil)
	inflaters.Put(z)
}

// Errors of inflate, which ReadMessage turns into close codes.
var (
	errInflateTooBig  = errors.New("inflated message past the read limit")
	errInflateCorrupt = errors.New("invalid deflate data")
)

// inflate appends the inflated z.in to dst, reading at most limit bytes
// of output: a message past it is errInflateTooBig, whatever it would
// inflate to, and dst has grown at most to limit plus a step. Data that
// is not a deflate stream of whole blocks is errInflateCorrupt.
func (z *inflater) inflate(dst []byte, limit int) ([]byte, error) {
	z.in = append(z.in, inflateTail...)
	z.src.Reset(z.in)
	if err := z.fr.(flate.Resetter).Reset(&z.src, nil); err != nil {
		return dst, fmt.Errorf("%w: %w", errInflateCorrupt, err)
	}
	for {
		if len(dst) > limit {
			return dst, errInflateTooBig
		}
		var n int
		var err error
		if cap(dst) > len(dst) {
			n, err = z.fr.Read(dst[len(dst):cap(dst)])
			dst = dst[:len(dst)+n]
		} else {
			// Full: read on into probe, so that a message that fills
			// the caller's buffer exactly does not grow it to find
			// the end. Then grow by what is there or a step, never
			// far past the limit: memory follows what inflating
			// produced, not what a bomb would.
			n, err = z.fr.Read(z.probe[:])
			if n > 0 {
				n = min(n, limit+1-len(dst))
				dst = slices.Grow(dst, min(limit+1-len(dst), max(readStep, len(dst), n)))
				dst = append(dst, z.probe[:n]...)
			}
		}
		switch {
		case err == io.EOF && len(dst) > limit:
			return dst, errInflateTooBig
		case err == io.EOF && z.src.Len() > len(inflateTail):
			// Only inflateTail, or part of it, may follow a final
			// block: bytes the peer sent after one of its own are no
			// deflate data.
			return dst, errInflateCorrupt
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return dst, fmt.Errorf("%w: %w", errInflateCorrupt, err)
		}
	}
}
