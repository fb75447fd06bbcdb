//go:build !js

package websocket

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestReadMemoryFollowsBytes is the attack of a header that claims a
// large frame followed by a trickle: the reader must hold memory for
// what arrived, not for what the header claims. Each of conns peers
// announces 1 MiB and sends 101 bytes; the live heap must not grow by
// anything near conns MiB.
func TestReadMemoryFollowsBytes(t *testing.T) {
	const (
		conns   = 64
		claimed = 1 << 20
		sent    = 100
	)
	var wg sync.WaitGroup
	var peers []net.Conn
	t.Cleanup(func() {
		for _, p := range peers {
			p.Close()
		}
		wg.Wait()
	})
	frame := wireFrame(true, 0, OpBinary, true, make([]byte, claimed))
	partial := frame[:MaxHeader+sent]

	before := liveHeap()
	for range conns {
		// net.Pipe is unbuffered: a peer's write returns only once the
		// reader took every byte, so the second write below returns only
		// when the reader is already waiting inside the payload.
		srvSide, peer := net.Pipe()
		peers = append(peers, peer, srvSide)
		c := newConn(srvSide, bufio.NewReaderSize(srvSide, 1<<10), false, "")
		c.SetReadLimit(2 * claimed)
		wg.Go(func() { _, _, _ = c.ReadMessage(nil) })
		peer.SetWriteDeadline(time.Now().Add(testTimeout))
		if _, err := peer.Write(partial); err != nil {
			t.Fatalf("peer write: %v", err)
		}
		if _, err := peer.Write(frame[MaxHeader+sent : MaxHeader+sent+1]); err != nil {
			t.Fatalf("peer write: %v", err)
		}
	}
	grown := int64(liveHeap()) - int64(before)
	// Before the fix: conns MiB (64 MiB). After: a few KiB per reader.
	if limit := int64(conns * 32 << 10); grown > limit {
		t.Fatalf("live heap grew by %d KiB for %d stalled frames of %d bytes received; want under %d KiB",
			grown>>10, conns, sent+1, limit>>10)
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestReadStalledFrame checks that a frame whose payload stops arriving
// is cut off after the frame timeout with a close frame saying why.
func TestReadStalledFrame(t *testing.T) {
	t.Parallel()
	c, p := acceptConn(t, nil)
	c.SetFrameTimeout(100 * time.Millisecond)
	errc := make(chan error, 1)
	go func() {
		_, _, err := c.ReadMessage(nil)
		errc <- err
	}()
	frame := p.frame(OpBinary, bytes.Repeat([]byte{'z'}, 4000))
	p.send(frame[:MaxHeader+10])
	code, reason := p.readClose()
	if code != StatusPolicyViolation || reason != "frame payload incomplete after 100ms" {
		t.Fatalf("close frame %d %q, want 1008 saying the payload is incomplete", code, reason)
	}
	p.nc.Close() // the staller gives up; the server stops draining it
	select {
	case err := <-errc:
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Code != StatusPolicyViolation {
			t.Fatalf("ReadMessage error %v, want a 1008 *ProtocolError", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ReadMessage did not return after the frame timeout")
	}
}

// TestReadTimeoutSparesIdle checks that the frame timeout bounds a frame,
// not the quiet between messages: after a frame that needed the network
// (so a deadline was set), a connection idle for longer than the timeout
// still reads its next message.
func TestReadTimeoutSparesIdle(t *testing.T) {
	t.Parallel()
	const timeout = 50 * time.Millisecond
	c, p := acceptConn(t, nil)
	c.SetFrameTimeout(timeout)
	type result struct {
		msg []byte
		err error
	}
	results := make(chan result, 1)
	read := func() {
		_, msg, err := c.ReadMessage(nil)
		results <- result{msg, err}
	}
	want := bytes.Repeat([]byte{'q'}, 3000)
	frame := p.frame(OpBinary, want)
	go read()
	p.send(frame[:MaxHeader+100])
	p.send(frame[MaxHeader+100:])
	for i := range 2 {
		select {
		case r := <-results:
			if r.err != nil || !bytes.Equal(r.msg, want) {
				t.Fatalf("message %d: %d bytes, %v; want the %d bytes sent", i, len(r.msg), r.err, len(want))
			}
		case <-time.After(testTimeout):
			t.Fatalf("message %d not read", i)
		}
		if i == 0 {
			go read()
			<-time.After(3 * timeout) // idle past the frame timeout, on purpose
			p.send(frame)
		}
	}
}

// TestReadCutOff: a peer that goes away between messages ends the read
// with io.EOF; one that goes away inside a frame, or between the
// fragments of a message, with io.ErrUnexpectedEOF, so that the caller
// can tell a vanished peer from a frame cut off.
func TestReadCutOff(t *testing.T) {
	t.Parallel()
	frame := wireFrame(true, 0, OpBinary, true, bytes.Repeat([]byte{'z'}, 4000)) // header: 2 + 2 + 4 bytes
	tests := []struct {
		name string
		sent []byte
		want error
	}{
		{name: "between messages", sent: wireFrame(true, 0, OpText, true, []byte("hi")), want: io.EOF},
		{name: "half a header", sent: frame[:1], want: io.ErrUnexpectedEOF},
		{name: "before the extended length", sent: frame[:2], want: io.ErrUnexpectedEOF},
		{name: "after the header", sent: frame[:8], want: io.ErrUnexpectedEOF},
		{name: "inside the payload", sent: frame[:100], want: io.ErrUnexpectedEOF},
		{name: "between fragments", sent: wireFrame(false, 0, OpText, true, []byte("hi")), want: io.ErrUnexpectedEOF},
		{name: "inside a control frame", sent: wireFrame(true, 0, OpPing, true, []byte("ping"))[:6], want: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, p := acceptConn(t, nil)
			p.send(tt.sent)
			p.nc.Close()
			var err error
			for err == nil { // the whole message of "between messages" first
				_, _, err = c.ReadMessage(nil)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("ReadMessage error %v, want %v", err, tt.want)
			}
			if tt.want == io.EOF && errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("ReadMessage error %v: a clean end reported as a cut-off frame", err)
			}
		})
	}
}
