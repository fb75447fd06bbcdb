package loadgen

import (
	"context"
	"errors"
	"fmt"

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
	// Options configure every connection; AppKey is required. OnState is
	// the driver's own (it reports lost connections); NetDial defaults to
	// a SpreadDialer.
	Options client.Options
}

// errDisconnected is reported when a connection drops; the client
// reconnects and resumes by position by itself.
var errDisconnected = errors.New("loadgen: connection lost (the client reconnects)")

// Name implements Driver.
func (d *RTM) Name() string {
	if d.Label == "" {
		return "rtm"
	}
	return d.Label
}

// Dial implements Driver.
func (d *RTM) Dial(ctx context.Context, problem func(error)) (Conn, error) {
	o := d.Options
	if o.NetDial == nil {
		o.NetDial = netDial()
	}
	o.OnState = func(s client.State) {
		if s == client.Disconnected {
			problem(errDisconnected)
		}
	}
	c, err := client.Dial(ctx, d.URL, &o)
	if err != nil {
		return nil, err
	}
	return &rtmConn{c: c, problem: problem}, nil
}

// rtmConn is one client.
type rtmConn struct {
	c       *client.Client
	problem func(error)
}

// Subscribe implements Conn.
func (c *rtmConn) Subscribe(ctx context.Context, channel string, onMessage func(string)) error {
	// The accounting of a delivery returns at once: it runs on the
	// reader, without a goroutine switch per message.
	opts := &client.SubscribeOptions{
		Direct:  true,
		OnError: func(err error) { c.problem(fmt.Errorf("subscription %q ended: %w", channel, err)) },
	}
	_, err := c.c.Subscribe(ctx, channel, opts, func(m client.Message) {
		s, ok := m.Value.(string)
		if !ok {
			c.problem(fmt.Errorf("%w: a %T on %q", errStamp, m.Value, channel))
			return
		}
		onMessage(s)
	})
	return refusal(err)
}

// Publish implements Conn.
func (c *rtmConn) Publish(ctx context.Context, channel, payload string) error {
	_, err := c.c.Publish(ctx, channel, payload)
	return refusal(err)
}

// PublishAsync implements AsyncPublisher.
func (c *rtmConn) PublishAsync(channel, payload string, done func(error)) error {
	return refusal(c.c.PublishAsync(channel, payload, func(_ rtm.Position, err error) { done(refusal(err)) }))
}

// PublishNoAck implements NoAckPublisher.
func (c *rtmConn) PublishNoAck(channel, payload string) error {
	return c.c.PublishNoAck(channel, payload)
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
