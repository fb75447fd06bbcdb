package peerlimit

import (
	"fmt"
	"testing"
	"time"
)

func TestFailuresLimitEachPeer(t *testing.T) {
	now := time.Unix(1e9, 0)
	f := New(6, func() time.Time { return now }) // one try back every 10 s
	for i := range 6 {
		if w := f.Wait("a"); w != 0 {
			t.Fatalf("failure %d: wait %v before the burst is spent", i, w)
		}
		f.Failed("a")
	}
	if w := f.Wait("a"); w <= 0 || w > 10*time.Second {
		t.Fatalf("after the burst: wait %v, want (0, 10s]", w)
	}
	if w := f.Wait("b"); w != 0 {
		t.Fatalf("another peer waits %v", w)
	}
	now = now.Add(10 * time.Second)
	if w := f.Wait("a"); w != 0 {
		t.Fatalf("a try later: wait %v", w)
	}
}

func TestFailuresForgetPeersPastTheBound(t *testing.T) {
	now := time.Unix(1e9, 0)
	f := New(1, func() time.Time { return now })
	for i := range maxPeers + 10 {
		f.Failed(fmt.Sprint(i))
	}
	if n := len(f.peers); n > maxPeers {
		t.Fatalf("%d peers remembered, at most %d", n, maxPeers)
	}
}

func TestPeer(t *testing.T) {
	for in, want := range map[string]string{"10.0.0.1:5000": "10.0.0.1", "[::1]:80": "::1", "unix": "unix"} {
		if got := Peer(in); got != want {
			t.Errorf("Peer(%q) = %q, want %q", in, got, want)
		}
	}
}
