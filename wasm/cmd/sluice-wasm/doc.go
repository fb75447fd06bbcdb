// Command sluice-wasm is the Sluice client compiled to WebAssembly
// (sluice.wasm, loaded by client-js/sluice.js); `make wasm` builds it with
// GOOS=js GOARCH=wasm. Its code is in main_js.go; natively it only says
// so.
package main
