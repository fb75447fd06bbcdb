//go:build unix

package websocket

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// seqFrame is frame i of a stream: a binary frame of n bytes starting
// with i, so that the peer can check it got every frame, whole, in order.
func seqFrame(c *Conn, dst []byte, i uint32, n int) []byte {
	p := bytes.Repeat([]byte{byte(i)}, n)
	binary.BigEndian.PutUint32(p, i)
	return c.AppendFrame(dst, OpBinary, p)
}

// readSeq reads frames from..to-1 of seqFrame's stream at the peer.
func readSeq(tb testing.TB, p *rawPeer, from, to uint32) {
	tb.Helper()
	for i := from; i < to; i++ {
		f := p.readFrame()
		if f.op != OpBinary || len(f.payload) < 4 || binary.BigEndian.Uint32(f.payload) != i {
			tb.Fatalf("frame %d: opcode %d, %d bytes, starting %x", i, f.op, len(f.payload), f.payload[:min(4, len(f.payload))])
		}
		for _, b := range f.payload[4:] {
			if b != byte(i) {
				tb.Fatalf("frame %d: payload corrupted", i)
			}
		}
	}
}

// TestTryWriteKeepsWhatTheSocketRefuses fills the socket of a peer that
// does not read with TryWrite: it never blocks, keeps the part of a frame
// the socket refused, refuses more until Write has sent that, and the
// peer then reads every frame whole and in order.
func TestTryWriteKeepsWhatTheSocketRefuses(t *testing.T) {
	t.Parallel()
	c, p := acceptConn(t, nil)
	if !c.CanTryWrite() {
		t.Fatal("CanTryWrite on a TCP connection = false")
	}
	var buf []byte
	i := uint32(0)
	for ; ; i++ {
		if i == 2000 {
			t.Fatal("2000 frames of 64 KiB went out to a peer that does not read")
		}
		buf = seqFrame(c, buf[:0], i, 64<<10)
		res, err := c.TryWrite(buf)
		if err != nil {
			t.Fatalf("TryWrite %d: %v", i, err)
		}
		if res == TryKept {
			break
		}
		if res != TryWritten {
			t.Fatalf("TryWrite %d = %v, want TryWritten until the socket is full", i, res)
		}
	}
	if res, err := c.TryWrite(seqFrame(c, nil, i+1, 10)); res != TryBusy || err != nil {
		t.Fatalf("TryWrite with bytes kept = %v, %v; want TryBusy", res, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		readSeq(t, p, 0, i+2)
	}()
	if err := c.Write(nil); err != nil { // the kept bytes alone
		t.Fatalf("Write(nil): %v", err)
	}
	if err := c.Write(seqFrame(c, nil, i+1, 10)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	<-done
}

// TestTryWriteBusy checks that TryWrite does not wait for another write,
// and that a connection that is no socket never tries.
func TestTryWriteBusy(t *testing.T) {
	t.Parallel()
	c, p := acceptConn(t, nil)
	c.wmu.Lock() // as a Write blocked on the peer holds it
	res, err := c.TryWrite(seqFrame(c, nil, 0, 10))
	c.wmu.Unlock()
	if res != TryBusy || err != nil {
		t.Fatalf("TryWrite during another write = %v, %v; want TryBusy", res, err)
	}
	if res, err := c.TryWrite(seqFrame(c, nil, 0, 10)); res != TryWritten || err != nil {
		t.Fatalf("TryWrite = %v, %v; want TryWritten", res, err)
	}
	readSeq(t, p, 0, 1)

	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	pc := newConn(a, nil, false, "")
	if pc.CanTryWrite() {
		t.Error("CanTryWrite on a net.Pipe = true")
	}
	if res, err := pc.TryWrite(seqFrame(pc, nil, 0, 10)); res != TryBusy || err != nil {
		t.Errorf("TryWrite on a net.Pipe = %v, %v; want TryBusy", res, err)
	}
}

// TestTryWriteAfterDeadline checks that TryWrite, which needs no
// deadline, writes once the deadline of an earlier Write has passed.
func TestTryWriteAfterDeadline(t *testing.T) {
	t.Parallel()
	c, p := acceptConn(t, nil)
	const timeout = 20 * time.Millisecond
	c.SetWriteTimeout(timeout)
	if err := c.Write(seqFrame(c, nil, 0, 10)); err != nil {
		t.Fatal(err)
	}
	readSeq(t, p, 0, 1)
	// Waiting for the deadline itself to pass: there is no event to
	// wait for instead.
	time.Sleep(2 * timeout)
	if res, err := c.TryWrite(seqFrame(c, nil, 1, 10)); res != TryWritten || err != nil {
		t.Fatalf("TryWrite after the deadline = %v, %v; want TryWritten", res, err)
	}
	if err := c.Write(seqFrame(c, nil, 2, 10)); err != nil {
		t.Fatalf("Write after TryWrite lifted the deadline: %v", err)
	}
	readSeq(t, p, 1, 3)
}

// TestTryWriteAfterClose checks that nothing follows the close frame.
func TestTryWriteAfterClose(t *testing.T) {
	t.Parallel()
	c, p := acceptConn(t, nil)
	if err := c.Close(StatusGoingAway, "restart"); err != nil {
		t.Fatal(err)
	}
	p.readClose()
	if _, err := c.TryWrite(seqFrame(c, nil, 0, 10)); !errors.Is(err, ErrClosed) {
		t.Fatalf("TryWrite after Close = %v, want ErrClosed", err)
	}
	c.CloseNow()
	p.expectEOF()
}

// TestTryWriteAllocs keeps TryWrite at zero allocations: it is on the
// fan-out path of every delivery.
func TestTryWriteAllocs(t *testing.T) {
	c, p := acceptConn(t, nil)
	f := seqFrame(c, nil, 0, 100)
	const runs = 100
	done := make(chan struct{})
	go func() { // reading into one buffer: the count of allocations is the process's
		defer close(done)
		buf := make([]byte, 64<<10)
		for left := (runs + 1) * len(f); left > 0; {
			n, err := p.br.Read(buf)
			if err != nil {
				t.Errorf("peer read: %v", err)
				return
			}
			left -= n
		}
	}()
	n := testing.AllocsPerRun(runs, func() {
		if res, err := c.TryWrite(f); res != TryWritten || err != nil {
			t.Errorf("TryWrite = %v, %v", res, err)
		}
	})
	<-done
	if n != 0 {
		t.Errorf("TryWrite allocates %v times, want 0", n)
	}
}
