package loadgen

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// connectSubscribers opens the subscribing connections, at most
// ConnectRate new ones per second, ConnectWorkers at a time, and returns
// how long the ramp took (from the first dial to the last subscription
// confirmed).
func (r *run) connectSubscribers(ctx context.Context) time.Duration {
	n := r.cfg.Subscribers
	if n == 0 {
		return 0
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(r.cfg.ConnectWorkers, n) {
		wg.Go(func() {
			for i := range jobs {
				r.openSubscriber(ctx, i)
			}
		})
	}
	start := time.Now()
	r.feed(ctx, jobs, n, start)
	close(jobs)
	wg.Wait()
	return time.Since(start)
}

// feed hands out connection indexes, paced by ConnectRate.
func (r *run) feed(ctx context.Context, jobs chan<- int, n int, start time.Time) {
	var pace pacer
	for i := range n {
		if rate := r.cfg.ConnectRate; rate > 0 {
			at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
			if !pace.until(ctx, at) {
				return
			}
		}
		select {
		case jobs <- i:
		case <-ctx.Done():
			return
		}
	}
}

// openSubscriber dials subscriber i and subscribes it to its channel.
func (r *run) openSubscriber(ctx context.Context, i int) {
	t0 := time.Now()
	s := r.subs[i]
	c, err := r.dialSubscriber(ctx, s.node)
	if err != nil {
		if ctx.Err() == nil {
			r.problems.add("dial", err)
		}
		return
	}
	if err := c.Subscribe(ctx, r.channelNames[s.channel], s.deliver); err != nil {
		if ctx.Err() == nil {
			r.problems.add("subscribe", err)
		}
		c.Close()
		return
	}
	r.dialLat.Record(i, time.Since(t0))
	r.subConns[i] = c // each index is written by one worker, read after wg.Wait
	r.open.Add(1)
}

// connProblem counts a connection's trouble reported by the driver: a
// lost connection the client recovers from apart from the rest.
func (r *run) connProblem(err error) {
	if IsDisconnect(err) {
		r.problems.add(ProblemDisconnected, err)
		return
	}
	r.problems.add("connection", err)
}

// ProblemDisconnected is the kind of error (Result.Errors) of a connection
// lost and recovered by its client: expected once per kill of a churning
// run, whose data the client then resumes by position.
const ProblemDisconnected = "disconnected"

// connectPublishers dials one connection per publisher and hands it to
// its lanes.
func (r *run) connectPublishers(ctx context.Context) error {
	conns := make([]Conn, r.cfg.Publishers)
	errs := make([]error, r.cfg.Publishers)
	var wg sync.WaitGroup
	for p := range conns {
		wg.Go(func() {
			conns[p], errs[p] = r.dial(ctx, 0)
		})
	}
	wg.Wait()
	r.pubConns = conns
	for p, err := range errs {
		if err != nil {
			return fmt.Errorf("loadgen: publisher %d: %w", p, err)
		}
		if _, ok := conns[p].(NoAckPublisher); r.cfg.NoAck && !ok {
			return fmt.Errorf("%w: %s cannot publish without acknowledgment", ErrConfig, r.d.Name())
		}
		r.open.Add(1)
	}
	perConn := len(r.lanes) / r.cfg.Publishers
	for i, l := range r.lanes {
		l.conn = conns[i/perConn]
	}
	return nil
}

// closeAll closes every connection, ConnectWorkers at a time.
func (r *run) closeAll() {
	var all []Conn
	for _, c := range append(r.pubConns, r.subConns...) {
		if c != nil {
			all = append(all, c)
		}
	}
	jobs := make(chan Conn)
	var wg sync.WaitGroup
	for range min(r.cfg.ConnectWorkers, len(all)) {
		wg.Go(func() {
			for c := range jobs {
				c.Close()
				r.open.Add(-1)
			}
		})
	}
	for _, c := range all {
		jobs <- c
	}
	close(jobs)
	wg.Wait()
	r.pubConns, r.subConns = nil, nil
}
