// Command precompress writes FILE.br and FILE.gz beside each FILE named
// on its command line, compressed at the best brotli and gzip levels:
// the edge serves the .br as it is, and the npm package carries both for
// hosts that serve precompressed files. `make wasm` runs it on
// sluice.wasm; the output is deterministic (the same bytes for the same
// input; the gzip header holds no name or date), which `make wasm-check`
// relies on.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/andybalholm/brotli"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: precompress FILE...")
		os.Exit(2)
	}
	for _, name := range os.Args[1:] {
		if err := precompress(name); err != nil {
			fmt.Fprintln(os.Stderr, "precompress:", err)
			os.Exit(1)
		}
	}
}

// precompress writes the brotli and gzip variants of one file and
// reports the sizes.
func precompress(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	br, err := compress(data, func(w io.Writer) (io.WriteCloser, error) {
		return brotli.NewWriterLevel(w, brotli.BestCompression), nil
	})
	if err != nil {
		return fmt.Errorf("brotli %s: %w", name, err)
	}
	gz, err := compress(data, func(w io.Writer) (io.WriteCloser, error) {
		return gzip.NewWriterLevel(w, gzip.BestCompression)
	})
	if err != nil {
		return fmt.Errorf("gzip %s: %w", name, err)
	}
	for ext, b := range map[string][]byte{".br": br, ".gz": gz} {
		if err := os.WriteFile(name+ext, b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%-32s %9d raw %9d brotli %9d gzip\n", name, len(data), len(br), len(gz))
	return nil
}

// compress runs data through the writer newWriter makes.
func compress(data []byte, newWriter func(io.Writer) (io.WriteCloser, error)) ([]byte, error) {
	var b bytes.Buffer
	w, err := newWriter(&b)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
