// Command precompress writes FILE.gz and FILE.br beside each FILE named on
// its command line, compressed at the best gzip and brotli levels, for the
// edge to serve as they are. `make wasm` runs it on sluice.wasm and
// wasm_exec.js.
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

// precompress writes the two compressed variants of one file and reports
// the sizes.
func precompress(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	gz, err := compress(data, func(w io.Writer) (io.WriteCloser, error) {
		return gzip.NewWriterLevel(w, gzip.BestCompression)
	})
	if err != nil {
		return fmt.Errorf("gzip %s: %w", name, err)
	}
	br, err := compress(data, func(w io.Writer) (io.WriteCloser, error) {
		return brotli.NewWriterLevel(w, brotli.BestCompression), nil
	})
	if err != nil {
		return fmt.Errorf("brotli %s: %w", name, err)
	}
	for ext, b := range map[string][]byte{".gz": gz, ".br": br} {
		if err := os.WriteFile(name+ext, b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%-32s %9d raw %9d gzip %9d brotli\n", name, len(data), len(gz), len(br))
	return nil
}

// compress runs data through one compressor.
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
