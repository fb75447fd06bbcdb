package journal

import (
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// natsLogger adapts the embedded NATS server's logger to slog: notices
// are debug (the server is chatty), warnings and errors keep their level,
// but for what a cluster says while its nodes find each other, and while
// a node is down, which read as failures and repeat:
//   - a route that cannot be dialled (NATS retries every second, from
//     each of a route's pooled connections) is logged once per peer
//     address at INFO while the peer never was up (a route to it failed
//     before the cluster formed, and none was made since), and at WARN
//     with backoff once it was (the peer is down): at the 1st, 2nd, 4th,
//     8th... failed attempt, not four times a second; the route's
//     return is logged at INFO;
//   - the waits for routes and a meta leader before the cluster first
//     formed are logged once, at INFO.
type natsLogger struct {
	log   *slog.Logger
	fatal chan string // the first fatal message, for StartNode

	mu sync.Mutex
	// peers are the addresses whose dial failed, so as many as there
	// are peers (route notices name accepted routes by their ephemeral
	// ports: those are not kept).
	peers  map[string]*peerDials
	formed bool // a meta leader was seen: the cluster formed
	waited bool // the wait for it was logged
}

// peerDials is what the logger knows of the routes to one peer address.
type peerDials struct {
	connected bool // a route to it was made: failures now mean it is down
	next      int  // the failed attempt to log next; earlier ones are debug
	down      bool // a failure was logged at WARN since the last route
}

func newNATSLogger(log *slog.Logger) *natsLogger {
	return &natsLogger{log: log.With("component", "nats"), fatal: make(chan string, 1), peers: map[string]*peerDials{}}
}

var (
	// routeDialFailed is NATS's report of a failed route dial: the
	// attempt and the error, which names the address dialled (dialAddr).
	routeDialFailed = regexp.MustCompile(`^Error trying to connect to route \(attempt (\d+)\): (.*)$`)
	dialAddr        = regexp.MustCompile(`^dial tcp (\S+?): |lookup (\S+?)[: ]`)
	// routeCreated is a route connection's notice, naming its remote
	// address; for a route the node dialled, the address it dialled.
	routeCreated = regexp.MustCompile(`^(\S+) - rid:\d+ - Route connection created$`)
)

// The waits of a forming cluster, and the notices that it formed.
var (
	clusterWaits = []string{"Waiting for routing to be established", "JetStream has not established contact with a meta leader"}
	metaLeader   = []string{"Self is new JetStream cluster metadata leader", "JetStream cluster new metadata leader",
		"JetStream cluster new remote metadata leader"}
)

func (l *natsLogger) Noticef(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if m := routeCreated.FindStringSubmatch(msg); m != nil {
		l.routeUp(m[1])
	} else if hasPrefix(msg, metaLeader) {
		l.mu.Lock()
		l.formed = true
		l.mu.Unlock()
	}
	l.log.Debug(msg)
}

func (l *natsLogger) Warnf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if hasPrefix(msg, clusterWaits) {
		l.mu.Lock()
		first, forming := !l.waited, !l.formed
		l.waited = true
		l.mu.Unlock()
		switch {
		case forming && first:
			l.log.Info("waiting for the cluster to form: a quorum of its nodes must be up and routed to each other", "nats", msg)
			return
		case forming:
			l.log.Debug(msg)
			return
		}
	}
	l.log.Warn(msg)
}

func (l *natsLogger) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.log.Error(msg)
	select {
	case l.fatal <- msg:
	default:
	}
}

func (l *natsLogger) Errorf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if m := routeDialFailed.FindStringSubmatch(msg); m != nil {
		attempt, _ := strconv.Atoi(m[1])
		addr := m[2] // the error itself, when it names no address
		if a := dialAddr.FindStringSubmatch(m[2]); a != nil {
			addr = a[1] + a[2]
		}
		l.routeDown(addr, attempt, msg)
		return
	}
	l.log.Error(msg)
}

func (l *natsLogger) Debugf(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Tracef(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }

// routeDown logs a failed dial of the route to addr by the logger's
// rules; attempt counts from 1 in each of NATS's dialling loops.
func (l *natsLogger) routeDown(addr string, attempt int, msg string) {
	l.mu.Lock()
	p := l.peers[addr]
	if p == nil {
		// Its first failure: a peer of a formed cluster was up (or
		// the cluster formed without it, which is as much a fault).
		p = &peerDials{connected: l.formed, next: 1}
		l.peers[addr] = p
	}
	log := attempt >= p.next
	if log {
		p.next = 2 * attempt
		p.down = p.down || p.connected
	}
	connected := p.connected
	l.mu.Unlock()
	switch {
	case !log:
		l.log.Debug(msg)
	case !connected && attempt == 1:
		l.log.Info("waiting for a cluster peer to come up: its route does not answer yet; retrying every second", "peer", addr, "nats", msg)
	default:
		l.log.Warn("a cluster peer is down: its route does not answer; retrying every second, logged again after twice the attempts",
			"peer", addr, "attempts", attempt, "nats", msg)
	}
}

// routeUp notes a route connection to addr, if a dial of it failed
// before: its failures start anew, and a peer logged down is logged back.
func (l *natsLogger) routeUp(addr string) {
	l.mu.Lock()
	p := l.peers[addr]
	back := p != nil && p.down
	if p != nil {
		p.connected, p.next, p.down = true, 1, false
	}
	l.mu.Unlock()
	if back {
		l.log.Info("a cluster peer is back: route connected", "peer", addr)
	}
}

// hasPrefix reports whether s starts with one of the prefixes.
func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
