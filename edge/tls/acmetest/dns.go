package acmetest

import (
	"fmt"
	"net"

	"github.com/miekg/dns"
)

// dnsServer answers every A question with 127.0.0.1 and every other
// question with no records, over TCP (what pebble's resolver uses), so
// that any domain an edge under test claims leads the validation
// authority to the edge's loopback ports.
type dnsServer struct {
	addr string
	srv  *dns.Server
	done chan error
}

// startDNS serves on a loopback port until close.
func startDNS() (*dnsServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &dnsServer{addr: ln.Addr().String(), done: make(chan error, 1)}
	started := make(chan struct{})
	d.srv = &dns.Server{Listener: ln, Handler: dns.HandlerFunc(answer), NotifyStartedFunc: func() { close(started) }}
	go func() { d.done <- d.srv.ActivateAndServe() }()
	select {
	case <-started:
		return d, nil
	case err := <-d.done:
		return nil, fmt.Errorf("acmetest: dns: %w", err)
	}
}

// answer resolves every name to 127.0.0.1.
func answer(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(q)
	m.Authoritative = true
	for _, question := range q.Question {
		if question.Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A:   net.IPv4(127, 0, 0, 1),
			})
		}
	}
	_ = w.WriteMsg(m)
}

// close stops the server and waits for it.
func (d *dnsServer) close() {
	if d.srv.Shutdown() == nil {
		<-d.done
	}
}
