package stream

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// TestTunnelRead checks the reader's side: injected frames wake a read
// parked on the connection, and the client going away ends it.
func TestTunnelRead(t *testing.T) {
	t.Parallel()
	edgeSide, client := net.Pipe()
	tun := NewTunnel(edgeSide, SessionEncoder{}, 1<<10)
	defer tun.Close()
	got := make(chan []byte)
	errc := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := tun.Read(buf)
			if err != nil {
				errc <- err
				return
			}
			got <- append([]byte(nil), buf[:n]...)
		}
	}()
	if err := tun.Inject(context.Background(), []byte("frame")); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "frame" {
		t.Fatalf("read %q, want frame", b)
	}
	client.Close()
	if err := <-errc; !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("after the client left: %v, want EOF", err)
	}
}

// TestTunnelInjectWaits checks that Inject waits while a body's worth is
// unread, and gives up when the session closes or the POST goes.
func TestTunnelInjectWaits(t *testing.T) {
	t.Parallel()
	edgeSide, client := net.Pipe()
	defer client.Close()
	tun := NewTunnel(edgeSide, SessionEncoder{}, 4)
	if err := tun.Inject(context.Background(), []byte("1234")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- tun.Inject(ctx, []byte("5")) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Inject after its context ended: %v", err)
	}
	go func() { done <- tun.Inject(context.Background(), []byte("5")) }()
	tun.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Inject after Close: %v, want ErrClosed", err)
	}
}

// TestTunnelWrite checks the writer's side: the upgrade's 101 is
// dropped, a data frame becomes an event, a ping a keep-alive (and a
// pong for the session), the close a close event and the response's end
// (and the client's close for the session).
func TestTunnelWrite(t *testing.T) {
	t.Parallel()
	edgeSide, client := net.Pipe()
	defer client.Close()
	tun := NewTunnel(edgeSide, SessionEncoder{}, 1<<10)
	defer tun.Close()
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(client)
		out <- string(b)
	}()
	if err := tun.Open(ContentTypeSSE, nil); err != nil {
		t.Fatal(err)
	}
	var frames []byte
	frames = append(frames, 0x81, 2, 'h', 'i')
	frames = append(frames, 0x89, 0)
	frames = append(frames, 0x88, 2, 0x03, 0xe9)
	for _, w := range [][]byte{[]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"), frames[:3], frames[3:]} {
		if _, err := tun.Write(w); err != nil {
			t.Fatal(err)
		}
	}
	tun.Close()
	want := "3b\r\ndata: hi\n\n:\n\nevent: close\ndata: {\"code\":1001,\"reason\":\"\"}\n\n\r\n0\r\n\r\n"
	if got := <-out; !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\n"+want) {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}
