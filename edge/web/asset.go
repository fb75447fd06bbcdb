package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

// minCompress is the size under which a file is always sent as is: the
// headers of a compressed response would outweigh the saving.
const minCompress = 1024

// lazyBrotliQuality is the brotli quality of the variants made on first
// request: the text files are small, and the best quality (11) is slow.
const lazyBrotliQuality = 9

// asset is one embedded file and its compressed variants.
type asset struct {
	name  string
	ctype string
	etag  string // of the identity encoding; variants append -br, -gz
	// brOnly marks a file embedded only brotli-compressed (sluice.wasm,
	// committed that way to keep the repository small): data is decoded
	// from br on the first request that cannot take brotli.
	brOnly bool
	// packed marks a file that is compressed already (the npm package):
	// sent as it is.
	packed bool

	once   sync.Once // decodes data if brOnly, makes the variants that were not embedded
	data   []byte    // written by once when brOnly
	br, gz variant
	err    error // of decoding a brOnly file; then only brotli is served
}

// variant is a compressed encoding of an asset; ready once made (or read
// from the embedded files).
type variant struct {
	data  []byte
	ready bool
}

// compressible reports whether the asset is sent compressed to browsers
// that accept it. Every served file is text or WebAssembly, which
// compress well; tiny ones are not worth it.
func (a *asset) compressible() bool {
	return !a.packed && (a.brOnly || len(a.data) >= minCompress)
}

// identity returns the file's bytes, decoding a brOnly file first.
func (a *asset) identity() ([]byte, error) {
	if !a.compressible() {
		return a.data, nil
	}
	a.once.Do(a.compress)
	return a.data, a.err
}

// pick returns the body, Content-Encoding ("" for none) and ETag (without
// quotes) of the best encoding the Accept-Encoding header allows: brotli,
// then gzip, then the file as is.
func (a *asset) pick(acceptEncoding string) (body []byte, encoding, etag string) {
	if !a.compressible() {
		return a.data, "", a.etag
	}
	br, gz := accepts(acceptEncoding)
	if br && a.brOnly {
		return a.br.data, "br", a.etag + "-br" // never written after load
	}
	a.once.Do(a.compress)
	if a.err != nil {
		return a.br.data, "br", a.etag + "-br" // checked at load, so not reached
	}
	switch {
	case br && a.br.ready:
		return a.br.data, "br", a.etag + "-br"
	case gz && a.gz.ready:
		return a.gz.data, "gzip", a.etag + "-gz"
	}
	return a.data, "", a.etag
}

// compress decodes a brOnly file and makes the variants that were not
// embedded; a variant that comes out larger than the file is dropped.
func (a *asset) compress() {
	if a.brOnly {
		if a.data, a.err = unbrotli(a.br.data); a.err != nil {
			return
		}
	}
	if !a.gz.ready {
		var b bytes.Buffer
		// The default level: for sluice.wasm (3.5 MiB) the best one took
		// 0.3 to 3 s (on a loaded machine) for 0.6% less, 150 ms.
		zw, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression) // a valid level cannot fail
		zw.Write(a.data)
		zw.Close()
		a.gz = variant{data: b.Bytes(), ready: b.Len() < len(a.data)}
	}
	if !a.br.ready {
		var b bytes.Buffer
		bw := brotli.NewWriterLevel(&b, lazyBrotliQuality)
		bw.Write(a.data)
		bw.Close()
		a.br = variant{data: b.Bytes(), ready: b.Len() < len(a.data)}
	}
}

// unbrotli decodes a brotli stream.
func unbrotli(b []byte) ([]byte, error) {
	return io.ReadAll(brotli.NewReader(bytes.NewReader(b)))
}

// accepts reads an Accept-Encoding header: whether brotli and gzip are
// acceptable (named, or covered by "*", with a q-value above 0).
func accepts(header string) (br, gz bool) {
	q := map[string]float64{}
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding == "" {
			continue
		}
		weight := 1.0
		if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(k) == "q" {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				weight = f
			}
		}
		q[coding] = weight
	}
	ok := func(coding string) bool {
		if w, named := q[coding]; named {
			return w > 0
		}
		w, star := q["*"]
		return star && w > 0
	}
	return ok("br"), ok("gzip") || ok("x-gzip")
}
