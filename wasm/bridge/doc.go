// Package bridge exports the Go client (wasm/client) to JavaScript when it
// is compiled to WebAssembly; client-js/sluice.js is its JavaScript face.
//
// Export returns an object of functions that take and return JavaScript
// values. Every call that talks to the edge returns a Promise at once and
// does its work on a goroutine: a js.FuncOf callback must never block, as
// the browser's event loop (which delivers WebSocket frames) waits for it.
// Clients and subscriptions are named by numbers, so no function value is
// created per client and nothing leaks when one closes.
//
// Messages cross as JavaScript values: null, booleans, numbers, strings,
// arrays, plain objects and Uint8Array (binary). Integers beyond 2^53 in
// either direction are BigInt; a JavaScript number that is an integer of at
// most 2^53 becomes an int64 on the wire, other numbers a float64. A Go
// panic in a call becomes a rejected Promise with a readable message (and
// the stack in the browser console) instead of stopping the program.
//
// The package builds only for js/wasm; this file lets the native tools
// see it.
package bridge
