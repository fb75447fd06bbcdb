package server_test

import (
	"bufio"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkIdleSubscriberMemory measures what an idle subscriber costs
// the edge, over a WebSocket and over Server-Sent Events: b.N clients
// each subscribed to a channel where nothing is published (and over a
// session stream, the browser client's fallback), the heap and
// goroutine stacks after a collection, per client. The clients are bare
// TCP connections in the same process (a few hundred bytes each, the
// same for both), so the figure is the edge's own.
//
//	go test -run '^$' -bench IdleSubscriberMemory -benchtime 2000x ./edge/server/
func BenchmarkIdleSubscriberMemory(b *testing.B) {
	for _, tt := range []struct {
		name string
		open func(b *testing.B, addr string) net.Conn
	}{
		{"websocket", idleWebSocket},
		{"sse", idleSSE},
		{"session-stream", idleSessionStream},
	} {
		b.Run(tt.name, func(b *testing.B) {
			e := startEdge(b, nil)
			addr := strings.TrimPrefix(e.httpURL(), "http://")
			g0, st0 := runtime.NumGoroutine(), stackInUse()
			before := memInUse()
			conns := make([]net.Conn, 0, b.N)
			for range b.N {
				conns = append(conns, tt.open(b, addr))
			}
			after := memInUse()
			b.ReportMetric(float64(runtime.NumGoroutine()-g0)/float64(b.N), "goroutines/subscriber")
			b.ReportMetric(float64(stackInUse()-st0)/float64(b.N), "stackB/subscriber")
			b.ReportMetric(float64(after-before)/float64(b.N), "B/subscriber")
			b.ReportMetric(0, "ns/op")
			for _, c := range conns {
				c.Close()
			}
		})
	}
}

// memInUse is the heap in use and the goroutine stacks, after a collection.
func memInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

func stackInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.StackInuse
}

// idleWebSocket connects a WebSocket by hand, subscribes and reads the
// reply.
func idleWebSocket(b *testing.B, addr string) net.Conn {
	c := dialRaw(b, addr, "GET /v2?appkey=test HTTP/1.1\r\nHost: edge\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(c)
	readHead(b, br)
	pdu := `{"action":"rtm/subscribe","id":1,"body":{"channel":"idle"}}`
	frame := append([]byte{0x81, 0x80 | byte(len(pdu)), 0, 0, 0, 0}, pdu...)
	if _, err := c.Write(frame); err != nil {
		b.Fatal(err)
	}
	hdr := make([]byte, 2)
	if _, err := br.Read(hdr); err != nil {
		b.Fatal(err)
	}
	if _, err := br.Discard(int(hdr[1] & 0x7f)); err != nil {
		b.Fatal(err)
	}
	return c
}

// idleSSE opens a subscribe stream and reads its head, which comes once
// the subscription is made.
func idleSSE(b *testing.B, addr string) net.Conn {
	c := dialRaw(b, addr, "GET /v2/subscribe?appkey=test&channel=idle HTTP/1.1\r\nHost: edge\r\nAccept: text/event-stream\r\n\r\n")
	readHead(b, bufio.NewReader(c))
	return c
}

// idleSessionStream opens a session stream (the browser client's
// fallback), subscribes by a POST on a connection of its own, closed
// after the answer, and reads the reply from the stream.
func idleSessionStream(b *testing.B, addr string) net.Conn {
	c := dialRaw(b, addr, "GET /v2/stream?appkey=test HTTP/1.1\r\nHost: edge\r\n\r\n")
	br := bufio.NewReader(c)
	readHead(b, br)
	var id string
	for id == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if _, rest, ok := strings.Cut(line, `"id":"`); ok {
			id, _, _ = strings.Cut(rest, `"`)
		}
	}
	pdu := `{"action":"rtm/subscribe","id":1,"body":{"channel":"idle"}}`
	post := dialRaw(b, addr, "POST /v2/stream?appkey=test&stream="+id+" HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n"+
		"Content-Length: "+strconv.Itoa(len(pdu))+"\r\n\r\n"+pdu)
	readHead(b, bufio.NewReader(post))
	post.Close()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if strings.Contains(line, "rtm/subscribe/ok") {
			return c
		}
	}
}

func dialRaw(b *testing.B, addr, request string) net.Conn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Write([]byte(request)); err != nil {
		b.Fatal(err)
	}
	return c
}

// readHead reads a response head and checks its status.
func readHead(b *testing.B, br *bufio.Reader) {
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 101 ") && !strings.Contains(status, " 200 ") && !strings.Contains(status, " 204 ") {
		b.Fatalf("response %q: %v", status, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if line == "\r\n" {
			return
		}
	}
}
