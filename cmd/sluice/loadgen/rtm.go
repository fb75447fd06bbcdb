package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strings"

	codecjson "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// RTM drives any RTM v2 endpoint (a Sluice edge, or another server
// speaking the protocol) through the Sluice Go client, in the codec of
// Options.Codec.
type RTM struct {
	// Label names the system in reports; default "rtm".
	Label string
	// URL is the endpoint, as in "ws://127.0.0.1:8080".
	URL string
	// MoreURLs are further endpoints of the same system (the other edges
	// of a cluster). With any, RTM is a NodeDriver: the publishers
	// connect to URL, the subscribers round-robin to URL and these.
	MoreURLs []string
	// Options configure every connection; AppKey is required. OnState is
	// the driver's own (it reports lost connections); NetDial defaults to
	// a SpreadDialer.
	Options client.Options
	// Delta subscribes with SubscribeOptions.Delta: the edge sends each
	// message after the first as a delta against the one before, which
	// the client applies before the subscriber checks it.
	Delta bool
	// RawSubscribers makes the subscribers raw ones (rawsub.go): they
	// read their JSON data PDUs themselves and check each message's JSON
	// as it came, without the client decoding it, for runs that must
	// cost the generator far less than the edge. JSON and an app key
	// only; their connections are no Killers (no Config.Churn).
	RawSubscribers bool
}

// errDisconnected is reported when a connection drops; the client
// reconnects and resumes by position by itself.
var errDisconnected = errors.New("loadgen: connection lost (the client reconnects)")

// IsDisconnect reports whether a connection problem is a lost connection
// the client recovers from by itself (reconnecting and resuming by
// position), as every kill of Config.Churn causes.
func IsDisconnect(err error) bool { return errors.Is(err, errDisconnected) }

// Name implements Driver.
func (d *RTM) Name() string {
	if d.Label == "" {
		return "rtm"
	}
	return d.Label
}

// Dial implements Driver: it connects to URL.
func (d *RTM) Dial(ctx context.Context, problem func(error)) (Conn, error) {
	return d.dial(ctx, d.URL, problem)
}

// Nodes implements NodeDriver: URL, then MoreURLs.
func (d *RTM) Nodes() []string { return append([]string{d.URL}, d.MoreURLs...) }

// DialNode implements NodeDriver.
func (d *RTM) DialNode(ctx context.Context, i int, problem func(error)) (Conn, error) {
	url, err := d.nodeURL(i)
	if err != nil {
		return nil, err
	}
	return d.dial(ctx, url, problem)
}

// DialSubscriber implements SubscriberDialer: a raw subscriber's
// connection with RawSubscribers, else DialNode's.
func (d *RTM) DialSubscriber(ctx context.Context, i int, problem func(error)) (Conn, error) {
	if !d.RawSubscribers {
		return d.DialNode(ctx, i, problem)
	}
	url, err := d.nodeURL(i)
	if err != nil {
		return nil, err
	}
	return d.dialRaw(ctx, url, problem)
}

// nodeURL is node i's URL (Nodes).
func (d *RTM) nodeURL(i int) (string, error) {
	switch {
	case i == 0:
		return d.URL, nil
	case i < 0 || i > len(d.MoreURLs):
		return "", fmt.Errorf("loadgen: no node %d of %d", i, 1+len(d.MoreURLs))
	}
	return d.MoreURLs[i-1], nil
}

// dial connects to one endpoint.
func (d *RTM) dial(ctx context.Context, url string, problem func(error)) (Conn, error) {
	o := d.Options
	if o.NetDial == nil {
		o.NetDial = netDial()
	}
	rc := &rtmConn{problem: problem, delta: d.Delta}
	o.NetDial = rc.kill.watch(o.NetDial)
	o.OnState = func(s client.State) {
		if s == client.Disconnected {
			problem(errDisconnected)
		}
	}
	c, err := client.Dial(ctx, url, &o)
	if err != nil {
		return nil, err
	}
	rc.c = c
	return rc, nil
}

// rtmConn is one client.
type rtmConn struct {
	c       *client.Client
	problem func(error)
	kill    killSwitch // the client's network connection, to drop it
	delta   bool       // subscribe with deltas
}

// Kill implements Killer: it resets the client's TCP connection; the
// client reconnects and resubscribes from its position by itself.
func (c *rtmConn) Kill() bool { return c.kill.kill() }

// Subscribe implements Conn.
func (c *rtmConn) Subscribe(ctx context.Context, channel string, onMessage func(string)) error {
	// The accounting of a delivery returns at once: it runs on the
	// reader, without a goroutine switch per message.
	opts := &client.SubscribeOptions{
		Direct:  true,
		Delta:   c.delta,
		OnError: func(err error) { c.problem(fmt.Errorf("subscription %q ended: %w", channel, err)) },
	}
	var buf []byte // the handler runs on the reader, one message at a time
	_, err := c.c.Subscribe(ctx, channel, opts, func(m client.Message) {
		switch v := m.Value.(type) {
		case string:
			onMessage(v)
		case map[string]any: // a feed message (PayloadFeed): its JSON, keys sorted
			var err error
			if buf, err = (codecjson.Codec{}).AppendValue(buf[:0], v); err != nil {
				c.problem(fmt.Errorf("%w: an object on %q: %w", errStamp, channel, err))
				return
			}
			onMessage(string(buf))
		default:
			c.problem(fmt.Errorf("%w: a %T on %q", errStamp, m.Value, channel))
		}
	})
	return refusal(err)
}

// message is what a payload is published as: a JSON object (a feed
// message, PayloadFeed) as an object, decoded into the canonical model
// (the client publishes an rtm.RawValue as binary), any other payload as
// a string. A feed message's object is made without decoding its JSON
// (feedObject).
func (c *rtmConn) message(payload string) (any, error) {
	if !strings.HasPrefix(payload, "{") {
		return payload, nil
	}
	var buf []byte
	if v, ok := feedObject(&buf, payload); ok {
		return v, nil
	}
	var v any
	if err := (codecjson.Codec{}).DecodeBody([]byte(payload), &v); err != nil {
		return nil, fmt.Errorf("loadgen: a JSON payload: %w", err)
	}
	return v, nil
}

// Publish implements Conn.
func (c *rtmConn) Publish(ctx context.Context, channel, payload string) error {
	m, err := c.message(payload)
	if err != nil {
		return err
	}
	_, err = c.c.Publish(ctx, channel, m)
	return refusal(err)
}

// PublishAsync implements AsyncPublisher.
func (c *rtmConn) PublishAsync(channel, payload string, done func(error)) error {
	m, err := c.message(payload)
	if err != nil {
		return err
	}
	return refusal(c.c.PublishAsync(channel, m, func(_ rtm.Position, err error) { done(refusal(err)) }))
}

// PublishNoAck implements NoAckPublisher.
func (c *rtmConn) PublishNoAck(channel, payload string) error {
	m, err := c.message(payload)
	if err != nil {
		return err
	}
	return c.c.PublishNoAck(channel, m)
}

// Close implements Conn.
func (c *rtmConn) Close() error { return c.c.Close() }

// refusal marks the edge's error replies with ErrRefused.
func refusal(err error) error {
	if _, ok := rtm.AsError(err); ok {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return err
}
