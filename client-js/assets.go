// Package clientjs holds the JavaScript client of Sluice (sluice.js, its
// TypeScript declarations, the WebAssembly files that `make wasm` puts in
// dist/) and the demo pages, embedded so that the edge serves them from its
// own binary (see edge/web). The JavaScript package itself needs no Go:
// package.json describes it for npm and bundlers.
package clientjs

import "embed"

// Files are the embedded files, by their path in this directory:
// sluice.js and the modules it imports (stream.js, lib/), sluice.d.ts, demo/, what the edge's npm package adds
// (package.json, README.md, LICENSE: a copy of the repository's, which
// TestLicense keeps equal; install.mjs and dist/sluice.wasm.d.ts), and
// the two generated files that are committed, so that every build of the
// binary (`go build`, `go install ...@VERSION`) serves a working client:
// dist/sluice.wasm.br (sluice.wasm brotli-compressed, which the edge
// decodes for browsers that cannot take brotli) and dist/wasm_exec.js.
// `make wasm` writes them and `make wasm-check` fails when the committed
// ones are not what it writes. The other files `make wasm` leaves in
// dist/ (sluice.wasm and sluice.wasm.gz, for npm) are named here by no
// pattern, so a build embeds the same files in any checkout.
//
//go:embed sluice.js stream.js lib sluice.d.ts demo dist/README.md dist/sluice.wasm.br dist/wasm_exec.js
//go:embed package.json README.md LICENSE install.mjs dist/sluice.wasm.d.ts
var Files embed.FS
