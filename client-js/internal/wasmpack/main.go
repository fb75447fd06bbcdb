// Command wasmpack rewrites a WebAssembly module in place so that it
// compresses better, without changing what it does: `make wasm` runs it
// on sluice.wasm after go build.
//
// Go's linker leaves every run of 8 or more zero bytes out of the data
// section, starting a new data segment after it: that makes the file
// smaller as it is, but sluice.wasm had 41,290 segments, and their
// headers (an offset and a length each, 320 KB) compress far worse than
// the zeros they replace. wasmpack joins segments that are at most
// maxGap bytes apart, writing the zeros between them: the module
// initializes the same memory (a fresh memory is all zeros, and every
// byte a segment did not write stays zero), as Pack checks before it
// returns. The file grows by some 420 KB and shrinks by 68 KB gzipped
// and 47 KB brotli-compressed, which is what browsers download.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: wasmpack FILE.wasm")
		os.Exit(2)
	}
	if err := packFile(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "wasmpack:", err)
		os.Exit(1)
	}
}

func packFile(name string) error {
	in, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	out, err := Pack(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return os.WriteFile(name, out, 0o644)
}
