// Package stream carries RTM sessions over plain HTTP, for clients that
// cannot open a WebSocket (a proxy that breaks upgrades, a runtime
// without WebSocket): Server-Sent Events and newline-delimited JSON over
// a chunked response.
//
// There is no second delivery path. A stream is an ordinary session
// (edge/session, edge/delivery) whose WebSocket runs over a Tunnel: a
// net.Conn that turns the frames the session writes into events on the
// hijacked HTTP connection, and hands the session, as client frames,
// the PDUs that arrive by POST (or that the edge sends on the client's
// behalf). So permissions, limits, positions, slow-reader cut-off and
// metrics are the WebSocket session's own.
//
//	session --ws frames--> Tunnel.Write --Encoder--> SSE / NDJSON chunks --> client
//	session <--ws frames-- Tunnel.Read  <--Inject--- POST bodies (or the edge's requests)
//
// An idle stream holds what an idle WebSocket session holds: the reader
// goroutine, parked in a read of the HTTP connection (which notices the
// client going away), and no buffers.
package stream
