package e2e

// Memory per tab with and without {shared: true}: what each tab's
// isolate holds (its JavaScript heap, and the memory of its WebAssembly
// instances, which V8 counts in neither heap nor ArrayBuffer backing
// stores), and the shared worker's, from the DevTools protocol.

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// heap is what an isolate holds, in bytes.
type heap struct{ js, wasm float64 }

func (h heap) total() float64 { return h.js + h.wasm }

func (h heap) String() string {
	return fmt.Sprintf("%.1f MB (JS heap %.1f MB, WebAssembly memory %.1f MB)", h.total()/1e6, h.js/1e6, h.wasm/1e6)
}

// heapOf collects a target's garbage and reads its isolate's heap.
func heapOf(t *testing.T, ctx context.Context) heap {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
		t.Fatalf("collect garbage: %v", err)
	}
	r, err := chromedp.Call(ctx, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		t.Fatalf("Runtime.getHeapUsage: %v", err)
	}
	return heap{js: r.UsedSize, wasm: wasmMemory(t, ctx)}
}

// wasmMemory sums the sizes of the WebAssembly.Memory objects of a
// target's isolate, found by their prototype (Runtime.queryObjects).
func wasmMemory(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	proto, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "WebAssembly.Memory.prototype"})
	if err != nil || proto.Result == nil {
		t.Fatalf("WebAssembly.Memory.prototype: %v", err)
	}
	objs, err := chromedp.Call(ctx, runtime.QueryObjects, runtime.QueryObjectsParams{PrototypeObjectID: proto.Result.ObjectID})
	if err != nil {
		t.Fatalf("Runtime.queryObjects: %v", err)
	}
	byValue := true
	r, err := chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function () { return this.reduce((n, m) => n + m.buffer.byteLength, 0); }",
		ObjectID:            objs.Objects.ObjectID,
		ReturnByValue:       &byValue,
	})
	if err != nil || r.Result == nil {
		t.Fatalf("the size of the WebAssembly memories: %v", err)
	}
	n, err := strconv.ParseFloat(string(r.Result.Value), 64)
	if err != nil {
		t.Fatalf("the size of the WebAssembly memories: %q: %v", r.Result.Value, err)
	}
	return n
}

// sharedWorkerHeap finds the shared worker of p's browser and reads its
// heap.
func sharedWorkerHeap(t *testing.T, b *chrome) heap {
	t.Helper()
	targets, err := chromedp.Targets(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range targets {
		if ti.Type != "shared_worker" {
			continue
		}
		ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(ti.TargetID))
		defer cancel()
		if err := chromedp.Do(ctx); err != nil {
			t.Fatalf("attach to the shared worker: %v", err)
		}
		return heapOf(t, ctx)
	}
	t.Fatalf("no shared worker among %d targets", len(targets))
	return heap{}
}

// testTabMemory opens three tabs subscribed to one channel, each with a
// client of its own, then three sharing one, and logs what each costs
// (for docs/benchmarks). Checked: a shared tab holds no WebAssembly
// memory, so it costs less than a tab with its own client.
func testTabMemory(t *testing.T, b *chrome) {
	e := startBrowserEdge(t)
	const n = 3
	var own heap
	owner := b.newTab(t, e.url)
	for range n {
		p := owner.sibling(t)
		p.openHarness()
		harnessMust[string](p, "connect", e.url, jsConnectOptions(browserAppkey, nil))
		harnessMust[string](p, "subscribe", "open.memory", map[string]any{})
		h := heapOf(t, p.ctx)
		own.js += h.js / n
		own.wasm += h.wasm / n
	}
	owner.close()
	_, tabs := sharedTabs(t, b, e, e.url, browserAppkey, "open.memory", n)
	var tab heap
	for _, p := range tabs {
		h := heapOf(t, p.ctx)
		tab.js += h.js / n
		tab.wasm += h.wasm / n
	}
	worker := sharedWorkerHeap(t, b)
	perTab := heap{js: tab.js + worker.js/n, wasm: tab.wasm + worker.wasm/n}
	t.Logf("memory per tab, %d tabs on one channel: own client %v; shared: %v (the tab %v, a third of the worker's %v)", n, own, perTab, tab, worker)
	if tab.wasm != 0 || worker.wasm == 0 || perTab.total() >= own.total() {
		t.Errorf("a shared tab holds %v, its share of the worker included %v; a tab with its own client %v", tab, perTab, own)
	}
}
