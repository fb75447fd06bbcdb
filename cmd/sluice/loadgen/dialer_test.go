package loadgen

import (
	"context"
	"net"
	"runtime"
	"slices"
	"testing"
)

func TestSpreadDialerTakesTurnsOfLoopbackSources(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	want := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.1"}
	if runtime.GOOS != "linux" {
		want = []string{"127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1"}
	}
	d := &SpreadDialer{Sources: 3}
	var got []string
	for range want {
		c, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer c.Close()
		in, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		src, _, _ := net.SplitHostPort(in.RemoteAddr().String())
		got = append(got, src)
	}
	if !slices.Equal(got, want) {
		t.Errorf("connections came from %v, want %v", got, want)
	}
}
