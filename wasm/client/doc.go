// Package client is the Go client of Sluice: one WebSocket to an edge
// speaking RTM v2, kept up across network failures. It is portable Go,
// tested natively and compiled to WebAssembly for browsers (where a thin
// layer exports it to JavaScript), and it is what `sluice pub/sub/read`,
// the load generator (cmd/sluice/loadgen) and the end-to-end tests use.
// It lives under wasm/ with the browser build because everything there
// must build for js/wasm; the native-only load generator does not.
//
//	c, err := client.Dial(ctx, "ws://127.0.0.1:8080", &client.Options{AppKey: "demo"})
//	pos, err := c.Publish(ctx, "chat", map[string]any{"text": "hi"})
//	sub, err := c.Subscribe(ctx, "chat", nil, func(m client.Message) { ... })
//	c.Close()
//
// # Connection
//
// Dial opens the WebSocket (msgpack by default), authenticates (role_secret
// or JWT) and returns. When the connection drops, the client reconnects
// with exponential backoff and full jitter, authenticates again and
// resubscribes every live subscription from the position after the last
// message it queued for that subscription's handler, without force. A
// connection loss inside the edge's retention window therefore loses and
// duplicates nothing. What cannot be recovered is reported, not hidden.
// Requests in flight when a connection drops fail with ErrDisconnected
// and are not retried (a retried publish could be stored twice); requests
// made while reconnecting wait for the new connection, bounded by their
// context.
//
// A resubscription the edge refuses with unavailable (a clustered or
// durable edge that cannot read its log now, as while the cluster elects
// a leader: try again) does not end the subscription: the client tries
// again on the same connection, from the same position, after a delay
// that grows from Options.MinBackoff to MaxBackoff with full jitter,
// until the edge takes it or refuses it otherwise; a connection that
// drops meanwhile leaves it to the next one, and Close ends it. So is a
// subscription the edge ends with unavailable (it could not read the
// history from its log): it is resubscribed after such a delay. The
// handler then goes on without gap or duplicate. A first Subscribe
// refused with unavailable returns that *rtm.Error and keeps nothing:
// its caller, which holds the context, decides whether to try again.
//
// # Gaps
//
// When the edge no longer has the position a subscription resumes from
// after a reconnect (expired_position: the edge restarted without
// persistence and its epoch changed, the client moved to an edge without
// that history, or the connection stayed down past the channel's
// retention), the client by default subscribes again with fast_forward,
// carries on from the oldest message the edge has, and calls
// SubscribeOptions.OnGap with a Gap: the position it asked for, the one
// it resumed at, the subscription's id and channel. This is Ably's
// "resumed: false" and Centrifugo's "recovered: false": a live page keeps
// working and can tell its user that messages may be missing. With
// SubscribeOptions.Strict the subscription ends instead, with the
// expired_position error reaching OnError. A fast_forward notice from
// the edge (a FastForward subscription that fell behind) reaches OnInfo,
// then OnGap; so does one for a subscription resumed past a gap, which
// the edge holds with fast_forward until the next reconnect. An
// out_of_sync push ends the subscription (but a paused one, see below)
// and reaches OnError, as does a slow handler's resubscription (see below) refused
// with expired_position: there the edge kept the messages, and it was the
// application that could not keep up (unless the connection was lost
// meanwhile: that resubscription follows a reconnect, and carries on).
//
// # Callbacks and the delivery buffer
//
// Every callback (message handlers, OnError, OnInfo, OnGap, Options.OnState) runs
// on one delivery goroutine per client: in order, one at a time. The reader
// goroutine never waits for them. Between the two sits a buffer bounded by
// Options.DeliveryBufferBytes (encoded bytes). When a subscription's data
// would overflow it, the client drops that data and pauses the
// subscription: it unsubscribes it on the edge, waits until the handlers
// have drained the buffer to half, then subscribes again from the position
// after the last message it had queued. The handler still sees every
// message exactly once and in order; a handler slower than the channel for
// longer than the edge's retention ends with expired_position via OnError,
// as a slow consumer would on the edge (also when the edge found its own
// read point, past the data the client dropped, expired first and said
// out_of_sync: the client resubscribes from its position regardless, and
// the edge answers for that). A subscription the edge itself could not
// keep up with, before any pause, ends with out_of_sync. Replies to
// requests never wait behind the buffer, so a handler may publish,
// subscribe or unsubscribe.
// A subscription with SubscribeOptions.Direct skips the buffer: its
// handler runs on the connection's reader as data arrives, for handlers
// that return at once. Likewise the acknowledgments of PublishAsync run on
// the reader, and the publishes they make leave in one write per read.
//
// # In the browser
//
// Built with GOOS=js GOARCH=wasm (sluice.wasm; wasm/bridge exports it to
// JavaScript), the client uses the browser's own WebSocket through
// syscall/js instead of coder/websocket, whose browser build links
// net/http. To keep sluice.wasm small (the budget is 1 MB gzipped) the
// browser build also leaves out what a browser does not need: it speaks
// msgpack only (the edge's codec, shared/codec/msgpack, linked without its
// msgpack library; CBOR and JSON are refused as Options.Codec, and an edge
// that picks no subprotocol
// is refused), Options.Logger is a small console logger (NewLogger) rather
// than log/slog, URLs are parsed by the browser, and the role_secret HMAC
// is computed without crypto/*. Browsers cannot send pings or custom
// handshake headers, and hide why a handshake failed: Dial then asks the
// edge over HTTP, so an unknown appkey is still invalid_appkey.
//
// # Goroutines and locks
//
// A client owns a supervisor goroutine (reconnects, pings, resubscribes),
// a delivery goroutine, and one reader goroutine per connection; Close
// stops and awaits them all. Client.mu guards the client's and its
// subscriptions' state; each connection has a leaf mutex for its pending
// requests, and its outbox one for the write queue (taken first when a
// request registers). Lock order: Client.mu, then the outbox's, then the
// connection's; no lock is held during I/O or callbacks.
package client
