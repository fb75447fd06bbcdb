//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "sluice-wasm runs in a browser: build it with `make wasm` (GOOS=js GOARCH=wasm)")
	os.Exit(2)
}
