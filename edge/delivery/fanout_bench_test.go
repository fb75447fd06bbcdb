package delivery_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/shared/websocket"
)

// BenchmarkFanout is the fan-out of one channel at a rate low enough
// that nothing queues: an op publishes one message and waits until each
// of the subscribers, over real loopback WebSockets, has read it, so that
// every delivery is one wake, one data PDU and one write(2). cpu-ns/delivery
// is the process's CPU time (user and system, the subscribers' reads
// included, which are the same for any edge) per delivery: on a loaded
// machine a steadier measure than the wall clock.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			benchmarkFanout(b, n)
		})
	}
}

func benchmarkFanout(b *testing.B, n int) {
	e := servertest.Start(b, &server.Options{Apps: []*app.App{app.Demo()},
		Limits: server.Limits{Connections: 2 * n}}, nil)
	var got atomic.Int64 // messages read by all subscribers
	var want atomic.Int64
	done := make(chan struct{}, 1)
	var wg sync.WaitGroup
	conns := make([]*websocket.Conn, n)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range conns {
		ws, err := websocket.Dial(ctx, e.URL+"/v2?appkey=demo", nil)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = ws
		if err := ws.Write(ws.AppendFrame(nil, websocket.OpText, []byte(`{"action":"rtm/subscribe","id":1,"body":{"channel":"bench"}}`))); err != nil {
			b.Fatal(err)
		}
		if _, reply, err := ws.ReadMessage(nil); err != nil || !strings.Contains(string(reply), "rtm/subscribe/ok") {
			b.Fatalf("subscribe: %s, %v", reply, err)
		}
		wg.Go(func() {
			var buf []byte
			for {
				_, frame, err := ws.ReadMessage(buf)
				if err != nil {
					return
				}
				buf = frame[:0]
				if got.Add(1) == want.Load() {
					done <- struct{}{}
				}
			}
		})
	}
	defer func() {
		for _, ws := range conns {
			ws.CloseNow()
		}
		wg.Wait() // servertest shuts the edge down when b ends
	}()
	msg := strings.Repeat("x", 128)
	publish := func() {
		want.Add(int64(n))
		if _, err := e.Server.Publish("demo", "bench", msg); err != nil {
			b.Fatal(err)
		}
		<-done
	}
	for range 10 { // the writers' buffers grow
		publish()
	}
	start := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		publish()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N*n), "cpu-ns/delivery")
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delivery")
}

// cpuTime is the process's CPU time, user and system, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
