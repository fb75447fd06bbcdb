// Command precompress writes FILE.br beside each FILE named on its
// command line, compressed at the best brotli level, for the edge to
// serve as it is. `make wasm` runs it on sluice.wasm; the output is
// deterministic (the same bytes for the same input), which `make
// wasm-check` relies on. The edge makes gzip itself when a browser asks.
//
// With -report it writes nothing and prints the sizes of sluice.wasm
// (raw, gzip, and its .br beside it) against the budget of package
// wasmsize, as `make wasm` does after every build.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/andybalholm/brotli"

	"github.com/sluicehq/sluice/client-js/internal/wasmsize"
)

func main() {
	report := flag.Bool("report", false, "print the sizes of FILE and FILE.br against the budget; write nothing")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: precompress [-report] FILE...")
		os.Exit(2)
	}
	run := precompress
	if *report {
		run = printReport
	}
	for _, name := range flag.Args() {
		if err := run(name); err != nil {
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

// printReport prints the sizes of a file and of its .br against the
// budget.
func printReport(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	br, err := os.Stat(name + ".br")
	if err != nil {
		return err
	}
	fmt.Print(wasmsize.Report(len(data), wasmsize.Gzip(data), int(br.Size())))
	return nil
}
