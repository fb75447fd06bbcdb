// Package websocket is the WebSocket protocol (RFC 6455) as Sluice needs
// it: the server's upgrade, a client's dial, and a connection that reads
// whole messages and writes frames the caller has already laid out.
//
// It exists for the edge's fan-out. A general-purpose library writes one
// message per call and flushes it with one system call, keeps 8 KiB of
// buffers per connection for life and a goroutine per connection for its
// own timeouts. Here the caller appends many frames to one buffer
// (AppendFrame) and writes them with one call (Write), so a subscriber
// that is behind gets its backlog in one system call; the connection
// itself holds only a small read buffer, and no goroutine.
//
// Why not gobwas/ws, which offers the same low-level control: its frame
// layer (ws.WriteHeader, ws.Cipher) would let the caller lay frames out in
// one buffer as well, and it starts no goroutine per connection either.
// But it leaves the connection to the caller: reassembling fragmented
// messages with control frames between them, answering pings, the close
// handshake and its timeout, checking close codes and close reasons, read
// limits, write deadlines. Its wsutil package does these through
// per-message io.Reader and io.Writer values with buffers of their own,
// the shape this package avoids; written on top of ws's frames they are
// most of this package anyway, so the library would save little and add
// three modules (ws, httphead, pool). Neither library gives the browser a
// client Sluice would use: sluice.wasm speaks through the browser's own
// WebSocket.
//
// Extensions: permessage-deflate (RFC 7692) only, when both sides ask for
// it (AcceptOptions.Deflate, DialOptions.Deflate), and always without
// context takeover, so that a connection holds no compressor between
// messages (see DeflateOptions); any other reserved bit is a protocol
// error. Fragmented messages from the peer are read; this side never
// fragments.
//
// Reading is for one goroutine at a time; writing is safe from several
// (Write serializes whole buffers), so the reader can answer pings while
// another goroutine writes data.
//
// It is not a public API: it does what the edge and Sluice's own clients
// need and no more, and it changes with them, with no compatibility
// promise to other importers (the module is an application; its packages
// are imported by its own commands and tests). It stays in shared/ rather
// than internal/ because DESIGN.md's layout keeps everything the edge and
// the clients share there (shared <- edge, wasm), as shared/rtm and
// shared/codec, which are no more public than it; internal/ holds the
// module's test and build helpers.
//
// For js/wasm only the close status codes and errors build (status.go):
// the browser client speaks through the browser's own WebSocket and shares
// just these codes, so that net/http stays out of sluice.wasm. The rest is
// "!js", as in coder/websocket.
package websocket
