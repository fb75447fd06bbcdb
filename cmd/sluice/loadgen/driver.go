package loadgen

import (
	"context"
	"errors"
)

// Driver opens connections to the system under test. Implementations must
// be safe for concurrent use: connections are dialed by many workers at
// once.
type Driver interface {
	// Name names the system in reports, as in "sluice" or "centrifugo".
	Name() string
	// Dial opens one connection, ready to subscribe and publish. problem
	// is called, from any goroutine and without blocking, for each
	// trouble the connection meets after Dial returned: the connection
	// lost (even if the client reconnects by itself), a subscription
	// ended by the server.
	Dial(ctx context.Context, problem func(error)) (Conn, error)
}

// Conn is one connection of the load generator. Subscribe, Publish and
// Close may be called from different goroutines.
type Conn interface {
	// Subscribe subscribes to a channel from the next message published
	// and returns once the server confirmed it. onMessage receives each
	// message's payload, one call at a time and in the order the server
	// delivered them.
	Subscribe(ctx context.Context, channel string, onMessage func(payload string)) error
	// Publish publishes a payload and waits for the server's
	// acknowledgment. An error wrapping ErrRefused means the server
	// answered and did not store the message.
	Publish(ctx context.Context, channel, payload string) error
	// Close closes the connection and waits for its goroutines.
	Close() error
}

// NoAckPublisher is a Conn that can also publish without waiting for an
// acknowledgment (RTM's publish without id). Config.NoAck needs it.
type NoAckPublisher interface {
	// PublishNoAck sends a publish and returns without an answer; it
	// fails only locally.
	PublishNoAck(channel, payload string) error
}

// AsyncPublisher is a Conn that can also publish without waiting:
// acknowledged publishes whose outcome comes to a callback, so that one
// goroutine keeps a publish outstanding per lane and the publishes that
// acknowledgments set off can share writes. Lanes use it when a Conn has
// it.
type AsyncPublisher interface {
	// PublishAsync sends a publish; done is called once with its
	// outcome, as Publish returns it, on any goroutine (possibly before
	// PublishAsync returns), and must not block. When PublishAsync
	// returns an error, done is not called.
	PublishAsync(channel, payload string, done func(error)) error
}

// SubscriberDialer is a Driver whose subscribers may connect otherwise
// than its publishers: a run dials its subscribers through
// DialSubscriber (node i, as NodeDriver.DialNode numbers them; 0 on a
// single node) when its driver has it.
type SubscriberDialer interface {
	DialSubscriber(ctx context.Context, i int, problem func(error)) (Conn, error)
}

// Killer is a Conn that can be dropped abruptly, as a crashed client or
// a cut network drops it (Config.Churn needs it).
type Killer interface {
	// Kill drops the connection with no close frame (natively a TCP
	// reset) and returns at once; the Conn reconnects by itself and
	// resumes its subscription by position. It reports whether there
	// was a connection to drop (false while it is reconnecting).
	Kill() bool
}

// ErrRefused marks a publish or subscribe the server answered with an
// error: nothing was stored, so the message's sequence number is reused.
var ErrRefused = errors.New("loadgen: refused by the server")

// ErrStalled is counted when a publisher waited a whole stall timeout for
// messages that never arrived (lost ones); it writes them off and goes on.
var ErrStalled = errors.New("loadgen: publisher stalled waiting for deliveries")

// NodeDriver is a Driver for a system of several nodes, such as the edges
// of a cluster: a run dials its publishers on the first node and spreads
// its subscribers over all of them, round-robin, so that what it measures
// crosses nodes; the result then gives every node's share (Result.Nodes).
// Such a run dials through DialNode alone.
type NodeDriver interface {
	Driver
	// Nodes names the nodes, as in their URLs; the first takes the
	// publishers. With fewer than two, the run is a single-node one.
	Nodes() []string
	// DialNode opens one connection to node i, as Dial does.
	DialNode(ctx context.Context, i int, problem func(error)) (Conn, error)
}
