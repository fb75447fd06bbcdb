// Command precompress writes FILE.br beside each FILE named on its
// command line, compressed at the best brotli level, for the edge to
// serve as it is. `make wasm` runs it on sluice.wasm; the output is
// deterministic (the same bytes for the same input), which `make
// wasm-check` relies on. The edge makes gzip itself when a browser asks.
package main

import (
	"bytes"
	"fmt"
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

// precompress writes the brotli variant of one file and reports the
// sizes.
func precompress(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	w := brotli.NewWriterLevel(&b, brotli.BestCompression)
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("brotli %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("brotli %s: %w", name, err)
	}
	if err := os.WriteFile(name+".br", b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("%-32s %9d raw %9d brotli\n", name, len(data), b.Len())
	return nil
}
