// The Node.js side of e2e/node_test.go, an application of the package:
// node roundtrip.mjs URL CHANNEL OPTIONS_JSON connects to the edge at URL
// with the connect options given, subscribes to CHANNEL with the last
// message of its history (which the test published), publishes
// {from: "node"}, waits for both messages and closes. It prints one JSON
// line: {ok: true, received, webSocket} or {ok: false, code, message}.
// With SLUICE_WS_PACKAGE=1 it passes the ws package's WebSocket class.
import { Sluice } from "@sluicehq/sluice";

const [url, channel, optionsJSON] = process.argv.slice(2);
const options = JSON.parse(optionsJSON);
const ws = process.env.SLUICE_WS_PACKAGE ? (await import("ws")).WebSocket : null;
if (ws) options.WebSocket = ws;

async function roundTrip() {
  const client = await Sluice.connect(url, options);
  const received = [];
  let both;
  const done = new Promise((resolve) => (both = resolve));
  const sub = client.subscribe(channel, { history: { count: 1 } }, (message) => {
    received.push(message);
    if (received.length === 2) both();
  });
  await sub.ready;
  await client.publish(channel, { from: "node" });
  await done;
  await client.close();
  // Which WebSocket the client used: the one passed, or the runtime's.
  return { ok: true, received, webSocket: ws && globalThis.WebSocket === ws ? "ws" : "runtime" };
}

let result;
try {
  result = await roundTrip();
} catch (e) {
  result = { ok: false, code: e.code, message: String(e.message) };
}
console.log(JSON.stringify(result));
// Exits at once: after close, the WebAssembly client keeps a timer of up
// to 5 s (its wait for the WebSocket's closing handshake, not stopped
// when the handshake ends), which would keep Node.js running that long.
process.exit(0);
