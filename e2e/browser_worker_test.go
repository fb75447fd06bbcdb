package e2e

// The package in a dedicated Web Worker: a module worker of the edge's
// page imports the edge's /sluice.js, subscribes, and posts what it gets
// to the page.

import (
	"fmt"
	"reflect"
	"testing"
)

// workerJS starts the worker and records what it posts in
// window.fromWorker; it resolves once the worker's subscription is ready,
// with what the worker says of itself, or with its error. %[1]q is the
// edge's URL, %[2]q the connect options, %[3]q the channel.
const workerJS = `new Promise((resolve) => {
  const src = 'import { Sluice } from "' + location.origin + '/sluice.js";\n' +
    'onmessage = async ({ data }) => {\n' +
    '  try {\n' +
    '    const client = await Sluice.connect(data.url, data.options);\n' +
    '    const sub = client.subscribe(data.channel, (message) => postMessage({ message }));\n' +
    '    await sub.ready;\n' +
    '    postMessage({ ready: true, scope: self.constructor.name, hasWindow: typeof window !== "undefined" });\n' +
    '  } catch (e) {\n' +
    '    postMessage({ error: e.code + ": " + e.message });\n' +
    '  }\n' +
    '};\n';
  const worker = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })), { type: "module" });
  window.fromWorker = [];
  worker.onmessage = ({ data }) => {
    if (data.message !== undefined) window.fromWorker.push(data.message);
    else resolve(data);
  };
  worker.onerror = (e) => resolve({ error: "worker error: " + e.message });
  worker.postMessage({ url: %[1]q, options: JSON.parse(%[2]q), channel: %[3]q });
})`

// workerReady is what the worker posts once subscribed.
type workerReady struct {
	Ready     bool   `json:"ready"`
	Scope     string `json:"scope"`
	HasWindow bool   `json:"hasWindow"`
	Error     string `json:"error"`
}

func testWorker(t *testing.T, b *chrome) {
	e := startBrowserEdge(t)
	p := b.newTab(t, e.url)
	p.open("/")
	opts := fmt.Sprintf(`{"appkey": %q, "minBackoff": 10, "maxBackoff": 200}`, browserAppkey)
	r := evalJS[workerReady](p, fmt.Sprintf(workerJS, e.url, opts, "open.worker"))
	if !r.Ready || r.Scope != "DedicatedWorkerGlobalScope" || r.HasWindow {
		t.Fatalf("the worker: %+v; want a subscription ready in a DedicatedWorkerGlobalScope\n%s", r, p.consoleText())
	}
	pub := browserPublisher(t, e)
	if _, err := pub.Publish(ctxFor(t), "open.worker", map[string]any{"to": "the worker"}); err != nil {
		t.Fatal(err)
	}
	p.waitJS("the worker's message", "window.fromWorker.length > 0")
	got := evalJS[[]any](p, "window.fromWorker")
	if want := []any{map[string]any{"to": "the worker"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the worker received %v, want %v", got, want)
	}
}
