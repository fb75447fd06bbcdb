package e2e

// The dashboard where several edges publish $sys.stats on one channel, as
// the edges of a cluster do: it draws their sum, and forgets an edge that
// went silent.

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// dashboardYAML is an app whose connections may publish on $sys.stats, so
// that the test can speak for a second edge.
const dashboardYAML = `apps:
  - appkey: dash
    roles:
      default:
        publish: ["$sys.stats"]
        subscribe: ["$sys.stats"]
`

func testDashboardSumsEdges(t *testing.T, b *chrome) {
	e := startCmdEdge(t, dashboardYAML)
	requireWasm(t, e.url)
	other := dial(t, e.url, client.Options{AppKey: "dash"})
	p := b.newTab(t, e.url)
	p.open("/dashboard.html?appkey=dash")
	connections := func() int {
		n, err := strconv.Atoi(evalJS[string](p, `document.querySelector("#connections").dataset.value ?? ""`))
		if err != nil {
			return -1
		}
		return n
	}
	// The edge's own samples (the first, replayed, from before any
	// connection).
	p.waitJS("the edge's own sample", `document.querySelector("#edges").textContent === "one edge"`)
	own := connections()
	if own < 0 {
		t.Fatal("the dashboard shows no connection count")
	}

	// Another edge's samples, at the times the edge's own carry: the
	// page adds them up.
	const others = 1000
	stop := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	silence := func() { once.Do(func() { close(stop) }); <-done }
	t.Cleanup(silence) // if the test ends first
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			_, err := other.Publish(ctxFor(t), "$sys.stats", map[string]any{
				"edge": "other-edge", "time": time.Now().UnixMilli(), "connections": int64(others),
				"subscriptions": int64(others), "channels": int64(1), "store_bytes": int64(0),
			})
			if err != nil {
				t.Errorf("publish the other edge's sample: %v", err)
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	p.waitJS("both edges' samples", `document.querySelector("#edges").textContent === "2 edges"`)
	poll.UntilNil(t, "the connections of both edges added up", func() error {
		if n := connections(); n < own+others {
			return fmt.Errorf("%d connections shown, want at least %d + %d", n, own, others)
		}
		return nil
	})
	silence()

	// Silent for 5 s of the edge's samples: the other edge is gone.
	p.waitJS("the silent edge forgotten", `document.querySelector("#edges").textContent === "one edge"`)
	if n := connections(); n >= others {
		t.Errorf("%d connections shown after the other edge went silent, want the edge's own", n)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("the dashboard logged errors:\n%s", strings.Join(errs, "\n"))
	}
}
