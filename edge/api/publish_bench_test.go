package api_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAPIPublish measures POST /api/publish over real loopback HTTP
// with keep-alive connections: one client sending one request at a time,
// and 64 such clients at once (each its own connection). It reports
// requests per second.
func BenchmarkAPIPublish(b *testing.B) {
	for _, clients := range []int{1, 64} {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) {
			e := startEdge(b, nil)
			tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			body := []byte(`{"channel":"bench","message":{"user":"backend","text":"a message of about a hundred bytes, as a chat line would be"}}`)
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			for range clients {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						req, err := http.NewRequest(http.MethodPost, e.url+"/api/publish", bytes.NewReader(body))
						if err != nil {
							b.Error(err)
							return
						}
						req.Header.Set("X-API-Key", alphaKey)
						resp, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Errorf("publish: HTTP %d", resp.StatusCode)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
