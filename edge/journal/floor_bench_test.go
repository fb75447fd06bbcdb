package journal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkJetStreamFloor is the least an acknowledged publish to the
// embedded node can cost, one in flight: the NATS protocol written by
// hand over the same in-process pipe the journal uses, into a stream
// the journal made (file storage, its duplicates window, a Msg-Id per
// publish), the acknowledgment read by one goroutine and nothing done
// with it. No nats.go, no journal, no store. Beside
// BenchmarkPublishPipelined/inflight=1/feed=sole, it parts what the
// journal adds from what JetStream itself costs, which a durable edge
// pays on every publish whatever its own code does (issue 31 §3).
func BenchmarkJetStreamFloor(b *testing.B) {
	n := node(b, "")
	j, _ := open(b, n, &Options{SoleWriter: true})
	subjects := make([]string, 5000)
	for i := range subjects {
		subjects[i] = j.subject("bench\x00ch" + strconv.Itoa(i))
	}
	j.Close() // the stream stays; nothing else reads or writes it
	c, acks := rawConn(b, n)
	floorLoop(b, c, acks, subjects, true)
}

// floorLoop publishes b.N messages of 160 bytes on c, round robin over
// subjects, each with a Msg-Id if msgID, one at a time, each awaited on
// acks (rawConn), and reports the process's CPU time a publish.
func floorLoop(b *testing.B, c net.Conn, acks <-chan []byte, subjects []string, msgID bool) {
	payload := make([]byte, 160)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		subj := subjects[i%len(subjects)]
		if msgID {
			id := strconv.Itoa(i)
			hdr := len("NATS/1.0\r\nNats-Msg-Id: \r\n\r\n") + len(id)
			buf = fmt.Appendf(buf[:0], "HPUB %s _FLOOR.ack %d %d\r\nNATS/1.0\r\nNats-Msg-Id: %s\r\n\r\n", subj, hdr, hdr+len(payload), id)
		} else {
			buf = fmt.Appendf(buf[:0], "PUB %s _FLOOR.ack %d\r\n", subj, len(payload))
		}
		buf = append(append(buf, payload...), "\r\n"...)
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(<-acks, []byte(`"seq":`)) {
			b.Fatalf("publish %d not stored", i)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkJetStreamFloorParts is BenchmarkJetStreamFloor into streams
// of its own, with and without what the journal's stream has: file
// storage (or memory), a Msg-Id per publish (for the duplicates window)
// or none. It parts JetStream's floor into what each costs.
func BenchmarkJetStreamFloorParts(b *testing.B) {
	subjects := make([]string, 5000)
	for i := range subjects {
		subjects[i] = "floor.ch" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name    string
		storage jetstream.StorageType
		msgID   bool
	}{
		{"file,msgid", jetstream.FileStorage, true},
		{"file", jetstream.FileStorage, false},
		{"memory,msgid", jetstream.MemoryStorage, true},
		{"memory", jetstream.MemoryStorage, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			n := node(b, "")
			nc, err := n.Connect("floor")
			if err != nil {
				b.Fatal(err)
			}
			js, err := jetstream.New(nc)
			if err != nil {
				b.Fatal(err)
			}
			_, err = js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "FLOOR", Subjects: []string{"floor.>"},
				Storage: tc.storage, Duplicates: 10 * time.Second})
			nc.Close()
			if err != nil {
				b.Fatal(err)
			}
			c, acks := rawConn(b, n)
			floorLoop(b, c, acks, subjects, tc.msgID)
		})
	}
}

// rawConn connects to n over the in-process pipe, subscribed to the
// acknowledgments' subject, and returns the connection and the bodies of
// the messages it receives. Its reader stops when the benchmark's
// cleanup closes the connection.
func rawConn(b *testing.B, n *Node) (net.Conn, <-chan []byte) {
	c, err := n.srv.InProcessConn()
	if err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReaderSize(c, 64<<10)
	// A pipe has no buffer: the server's INFO is read before CONNECT is
	// written, or each waits for the other.
	if _, err := r.ReadString('\n'); err != nil {
		b.Fatalf("reading INFO: %v", err)
	}
	fmt.Fprintf(c, "CONNECT {\"auth_token\":%q,\"verbose\":false,\"headers\":true,\"protocol\":1}\r\nSUB _FLOOR.> 1\r\nPING\r\n", n.token)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("connecting: %v", err)
		}
		if line == "PONG\r\n" {
			break
		}
	}
	acks := make(chan []byte, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			switch {
			case bytes.HasPrefix(line, []byte("MSG ")):
				f := bytes.Fields(line)
				size, _ := strconv.Atoi(string(f[len(f)-1]))
				body := make([]byte, size+2)
				if _, err := io.ReadFull(r, body); err != nil {
					return
				}
				acks <- body[:size]
			case bytes.HasPrefix(line, []byte("PING")):
				c.Write([]byte("PONG\r\n"))
			}
		}
	}()
	b.Cleanup(func() {
		c.Close()
		<-stopped
	})
	return c, acks
}

// BenchmarkJetStreamFloorNATSGo is BenchmarkJetStreamFloor through
// nats.go on the same pipe (the journal's connection: Node.Connect), the
// acknowledgment taken by an async subscription's handler: what nats.go
// itself adds to a publish, its flusher and its subscription's
// goroutine, apart from the journal.
func BenchmarkJetStreamFloorNATSGo(b *testing.B) {
	n := node(b, "")
	j, _ := open(b, n, &Options{SoleWriter: true})
	subjects := make([]string, 5000)
	for i := range subjects {
		subjects[i] = j.subject("bench\x00ch" + strconv.Itoa(i))
	}
	j.Close()
	nc, err := n.Connect("floor")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	acks := make(chan []byte, 1)
	if _, err := nc.Subscribe("_FLOOR.>", func(m *nats.Msg) { acks <- m.Data }); err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 160)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		m := &nats.Msg{Subject: subjects[i%len(subjects)], Reply: "_FLOOR.ack", Data: payload,
			Header: nats.Header{"Nats-Msg-Id": []string{strconv.Itoa(i)}}}
		if err := nc.PublishMsg(m); err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(<-acks, []byte(`"seq":`)) {
			b.Fatalf("publish %d not stored", i)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
