// Command floor is the floor of e2e/compare: the least a server can do for
// the load generator's RTM clients. It accepts the same WebSocket
// connections as a Sluice edge (/v2, subprotocol json, msgpack or cbor),
// answers subscribe, unsubscribe and publish, and for each publish writes
// one pre-encoded rtm/subscription/data frame to each subscriber: the
// message encoded once per codec, the frame built once per codec and
// subscription id, one write per message per connection. Nothing else:
// no store, no history, no batching, no queues, no limits. The CPU it
// spends per delivery is what the kernel and the WebSocket framing cost,
// the floor that a real server's CPU per delivery is measured against.
//
// It parses requests with Sluice's codecs (shared/codec), whose decoding
// of a publish costs about a microsecond: next to the system calls of a
// delivery, a small part of the floor.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *listen)
	if err == nil {
		err = serve(ctx, ln)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// serve serves on ln until ctx ends, then closes every connection and
// waits for their goroutines.
func serve(ctx context.Context, ln net.Listener) error {
	s := newServer()
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-done:
		s.close()
		return fmt.Errorf("serve: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-done
	s.close() // the WebSocket connections, which Shutdown does not track
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
