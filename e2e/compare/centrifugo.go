package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/centrifugal/centrifuge-go"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// centrifugoDriver drives Centrifugo through its Go client, so the load
// generator runs the same scenarios against it as against Sluice.
// With several URLs (the nodes of a cluster) it is a loadgen.NodeDriver.
type centrifugoDriver struct {
	urls []string // ws://host:port/connection/websocket, node 1 first
	// json selects Centrifugo's JSON protocol; default protobuf, its
	// binary one (as msgpack is Sluice's).
	json bool
	// dialer spreads connections over loopback source addresses, as the
	// Sluice driver does, so both ramps get the same port space.
	dialer loadgen.SpreadDialer
}

func (d *centrifugoDriver) Name() string { return "centrifugo" }

// Dial implements loadgen.Driver: it connects to node 1 and waits for the
// connect reply.
func (d *centrifugoDriver) Dial(ctx context.Context, problem func(error)) (loadgen.Conn, error) {
	return d.DialNode(ctx, 0, problem)
}

// Nodes implements loadgen.NodeDriver; with one URL, the run is a
// single-node one.
func (d *centrifugoDriver) Nodes() []string { return d.urls }

// DialNode implements loadgen.NodeDriver: it connects to node i and waits
// for the connect reply.
func (d *centrifugoDriver) DialNode(ctx context.Context, i int, problem func(error)) (loadgen.Conn, error) {
	if i < 0 || i >= len(d.urls) {
		return nil, fmt.Errorf("centrifugo: no node %d of %d", i, len(d.urls))
	}
	cfg := centrifuge.Config{
		// The same patience as the Sluice client's: under a 19,000
		// connection ramp on two cores a handshake may take a while.
		HandshakeTimeout: 15 * time.Second,
		ReadTimeout:      15 * time.Second,
		WriteTimeout:     10 * time.Second,
		NetDialContext:   d.dialer.DialContext,
	}
	var c *centrifuge.Client
	if d.json {
		c = centrifuge.NewJsonClient(d.urls[i], cfg)
	} else {
		c = centrifuge.NewProtobufClient(d.urls[i], cfg)
	}
	cn := &centrifugoConn{c: c, json: d.json}
	// Problems are reported while connected, and not for Close's own
	// disconnection and unsubscriptions.
	cn.problem = func(err error) {
		if !cn.closing.Load() {
			problem(err)
		}
	}
	connected := make(chan struct{})
	var once sync.Once
	c.OnConnected(func(centrifuge.ConnectedEvent) { once.Do(func() { close(connected) }) })
	c.OnDisconnected(func(e centrifuge.DisconnectedEvent) {
		select {
		case <-connected:
			cn.problem(fmt.Errorf("centrifugo: disconnected: %d %s", e.Code, e.Reason))
		default:
		}
	})
	if err := c.Connect(); err != nil {
		c.Close()
		return nil, fmt.Errorf("centrifugo: connect: %w", err)
	}
	select {
	case <-connected:
		return cn, nil
	case <-ctx.Done():
		c.Close()
		return nil, fmt.Errorf("centrifugo: connect: %w", ctx.Err())
	}
}

// centrifugoConn is one Centrifugo client.
type centrifugoConn struct {
	c       *centrifuge.Client
	json    bool
	problem func(error)
	closing atomic.Bool // set by Close before it closes the client
}

// Subscribe implements loadgen.Conn.
func (c *centrifugoConn) Subscribe(ctx context.Context, channel string, onMessage func(string)) error {
	sub, err := c.c.NewSubscription(channel)
	if err != nil {
		return fmt.Errorf("centrifugo: subscribe %q: %w", channel, err)
	}
	subscribed := make(chan struct{})
	failed := make(chan error, 1)
	var once sync.Once
	sub.OnSubscribed(func(centrifuge.SubscribedEvent) { once.Do(func() { close(subscribed) }) })
	sub.OnError(func(e centrifuge.SubscriptionErrorEvent) {
		select {
		case failed <- e.Error:
		default:
		}
	})
	sub.OnUnsubscribed(func(e centrifuge.UnsubscribedEvent) {
		c.problem(fmt.Errorf("centrifugo: subscription %q ended: %d %s", channel, e.Code, e.Reason))
	})
	sub.OnPublication(func(e centrifuge.PublicationEvent) { onMessage(c.unwrap(e.Data)) })
	if err := sub.Subscribe(); err != nil {
		return fmt.Errorf("centrifugo: subscribe %q: %w", channel, err)
	}
	select {
	case <-subscribed:
		return nil
	case err := <-failed:
		return fmt.Errorf("%w: centrifugo: subscribe %q: %w", loadgen.ErrRefused, channel, err)
	case <-ctx.Done():
		return fmt.Errorf("centrifugo: subscribe %q: %w", channel, ctx.Err())
	}
}

// Publish implements loadgen.Conn.
func (c *centrifugoConn) Publish(ctx context.Context, channel, payload string) error {
	_, err := c.c.Publish(ctx, channel, c.wrap(payload))
	var ce *centrifuge.Error
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: centrifugo: %w", loadgen.ErrRefused, err)
	}
	return err
}

// Close implements loadgen.Conn.
func (c *centrifugoConn) Close() error {
	c.closing.Store(true)
	c.c.Close()
	return nil
}

// wrap makes the payload a JSON string for the JSON protocol, which
// carries JSON values only; the protobuf protocol carries bytes.
func (c *centrifugoConn) wrap(payload string) []byte {
	if c.json {
		return strconv.AppendQuote(nil, payload)
	}
	return []byte(payload)
}

// unwrap undoes wrap.
func (c *centrifugoConn) unwrap(data []byte) string {
	if c.json {
		if s, err := strconv.Unquote(string(data)); err == nil {
			return s
		}
	}
	return string(data)
}
