// The browser client's fallback transport, for where a WebSocket cannot
// open (a proxy that breaks upgrades, a page whose WebSocket is blocked):
// an RTM session over plain HTTP, the edge's /v2/stream. Its PDUs come
// as Server-Sent Events (EventSource) and the client's go out as POSTs,
// one at a time, in order.
//
// It lives here rather than in sluice.wasm: the Go client keeps speaking
// to what looks like a browser WebSocket (StreamSocket below has the
// part of the WebSocket API it uses), so the WebAssembly file does not
// grow and every feature of the client (resume by position, reconnect,
// auth) works over the fallback unchanged. See docs/http-streaming.md.

/** The transports a connection may use. */
export const WEBSOCKET = "websocket";
export const HTTP_STREAM = "http-stream";

// Where a WebSocket failed before it opened and the stream then worked:
// later connections there go straight to the stream (a proxy that blocks
// upgrades keeps blocking them), by the endpoint's host.
const streamHosts = new Set();

// The transport of the last connection that opened, by host: what
// Client.transport reports.
const opened = new Map();

/** transportOf is the transport the last connection to url's host opened with. */
export function transportOf(url) {
  try {
    return opened.get(new URL(url, globalThis.location?.href).host) || WEBSOCKET;
  } catch {
    return WEBSOCKET;
  }
}

/**
 * fallbackWebSocket returns a WebSocket-shaped class that opens Real (the
 * runtime's WebSocket) and, where that throws or fails before it opens,
 * opens the edge's HTTP stream instead. Runtimes without EventSource
 * (Node.js) only ever get Real.
 */
export function fallbackWebSocket(Real) {
  if (!streamable()) return Real;
  return class SluiceSocket extends StreamSocket {
    constructor(url, protocols) {
      super(Real, url, protocols);
    }
  };
}

// WebSockets opened ahead of the client (preopen), by URL and
// subprotocols, with the events each heard, until a SluiceSocket takes it.
const early = new Map();

function earlyKey(url, protocols) {
  return url + " " + protocols.join(",");
}

/**
 * preopen opens the WebSocket that the client's dial of url will ask for,
 * while sluice.wasm still downloads and compiles; the SluiceSocket that
 * asks for the same URL and subprotocols takes it over, with what it heard
 * so far. It returns a function that closes it if nothing took it. Where
 * the client would not use a SluiceSocket (no EventSource) or the host
 * blocks WebSockets (streamHosts), it opens nothing.
 */
export function preopen(url, protocols) {
  const key = earlyKey(url, protocols);
  if (!url || !streamable() || streamHosts.has(hostOf(url)) || early.has(key)) return () => {};
  let ws;
  try {
    ws = new globalThis.WebSocket(url, protocols);
  } catch {
    return () => {}; // the client's own dial reports it
  }
  // As the client's dial sets it; a message that came before it took the
  // socket keeps the type it came with.
  ws.binaryType = "arraybuffer";
  const held = { ws, events: [] };
  for (const type of ["open", "message", "error", "close"]) ws["on" + type] = (ev) => held.events.push(ev);
  early.set(key, held);
  return () => {
    if (early.get(key) !== held) return;
    early.delete(key);
    ws.close();
  };
}

function takeEarly(url, protocols) {
  const key = earlyKey(url, protocols);
  const held = early.get(key);
  early.delete(key);
  return held;
}

function streamable() {
  return typeof globalThis.EventSource === "function" && typeof globalThis.fetch === "function";
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

class StreamSocket {
  onopen = null;
  onmessage = null;
  onclose = null;
  onerror = null;
  protocol = "";
  readyState = CONNECTING;
  #binaryType = "blob";
  #url;
  #protocols;
  #ws = null; // the real WebSocket, while it is the transport
  #es = null; // the EventSource, once the stream is
  #post = ""; // where the stream's POSTs go
  #binary = false; // the stream's PDUs are binary (base64 in events)
  #queue = []; // PDUs not posted yet
  #queued = 0; // their bytes
  #sending = null; // the POST in flight
  #abort = null;
  #givenUp = false; // close() was called: a failed WebSocket is not replaced

  constructor(Real, url, protocols) {
    this.#url = String(url);
    this.#protocols = protocols === undefined ? [] : [].concat(protocols);
    if (streamHosts.has(hostOf(this.#url))) {
      queueMicrotask(() => this.#openStream());
      return;
    }
    const held = takeEarly(this.#url, this.#protocols);
    try {
      this.#ws = held ? held.ws : new Real(url, protocols);
    } catch {
      queueMicrotask(() => this.#openStream());
      return;
    }
    this.#ws.binaryType = this.#binaryType;
    this.#ws.onopen = (ev) => {
      this.protocol = this.#ws.protocol;
      this.readyState = OPEN;
      opened.set(hostOf(this.#url), WEBSOCKET);
      this.onopen?.(ev);
    };
    this.#ws.onmessage = (ev) => this.onmessage?.(ev);
    this.#ws.onerror = (ev) => {
      if (this.readyState !== CONNECTING) this.onerror?.(ev);
    };
    this.#ws.onclose = (ev) => {
      if (this.readyState === CONNECTING && !this.#givenUp) {
        this.#ws = null;
        this.#openStream(); // it never opened: try the stream
        return;
      }
      this.#closed(ev.code, ev.reason);
    };
    // What the early socket heard before this took it, in order, once
    // the caller (sluice.wasm's dial, in the same task) has set its
    // handlers; events after it are tasks, which come later.
    if (held) queueMicrotask(() => held.events.forEach((ev) => this.#ws?.["on" + ev.type]?.(ev)));
  }

  get binaryType() {
    return this.#binaryType;
  }

  set binaryType(t) {
    this.#binaryType = t;
    if (this.#ws) this.#ws.binaryType = t;
  }

  get bufferedAmount() {
    return this.#ws ? this.#ws.bufferedAmount : this.#queued;
  }

  get url() {
    return this.#url;
  }

  send(data) {
    if (this.#ws) return this.#ws.send(data);
    if (this.readyState !== OPEN) throw new DOMException("the stream is not open", "InvalidStateError");
    const pdu = typeof data === "string" ? new TextEncoder().encode(data) : new Uint8Array(data.buffer ?? data, data.byteOffset ?? 0, data.byteLength);
    this.#queue.push(pdu.slice());
    this.#queued += pdu.byteLength;
    this.#pump();
  }

  close(code = 1000, reason = "") {
    this.#givenUp = true;
    if (this.#ws) return this.#ws.close(code, reason);
    if (this.readyState === CLOSED || this.readyState === CLOSING) return;
    this.readyState = CLOSING;
    // Dropping the event stream ends the session on the edge.
    queueMicrotask(() => this.#closed(code, reason));
  }

  // #openStream opens the edge's /v2/stream for the WebSocket URL.
  #openStream() {
    if (this.readyState !== CONNECTING) return;
    let u;
    try {
      u = new URL(this.#url, globalThis.location?.href);
    } catch {
      this.#closed(1006, "bad URL");
      return;
    }
    u.protocol = u.protocol === "wss:" ? "https:" : u.protocol === "ws:" ? "http:" : u.protocol;
    u.pathname = u.pathname.replace(/\/v2\/?$/, "") + "/v2/stream";
    if (this.#protocols.length > 0) u.searchParams.set("codec", this.#protocols[0]);
    const es = new EventSource(u.href);
    this.#es = es;
    es.addEventListener("session", (ev) => {
      const { id, codec } = JSON.parse(ev.data);
      this.#binary = codec !== "json";
      this.protocol = this.#protocols.includes(codec) ? codec : "";
      const post = new URL(u.href);
      post.searchParams.delete("codec");
      post.searchParams.set("stream", id);
      this.#post = post.href;
      this.readyState = OPEN;
      streamHosts.add(hostOf(this.#url));
      opened.set(hostOf(this.#url), HTTP_STREAM);
      this.onopen?.(new Event("open"));
    });
    es.onmessage = (ev) => this.onmessage?.(new MessageEvent("message", { data: this.#decode(ev.data) }));
    es.addEventListener("close", (ev) => {
      const { code, reason } = JSON.parse(ev.data);
      this.#closed(code, reason);
    });
    // The session lives as long as this one event stream: EventSource's
    // own reconnect would open a new, empty one, so the client's
    // reconnect (which resubscribes from its positions) does it instead.
    es.onerror = () => this.#closed(1006, "");
  }

  #decode(data) {
    if (!this.#binary) return data;
    const bin = atob(data);
    const b = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i);
    return this.#binaryType === "arraybuffer" ? b.buffer : new Blob([b]);
  }

  // #pump posts what is queued, one POST at a time so the edge gets the
  // PDUs in the order they were sent.
  #pump() {
    if (this.#sending || this.#queue.length === 0 || this.readyState !== OPEN) return;
    const pdus = this.#queue;
    this.#queue = [];
    const body = this.#binary ? framed(pdus) : pdus.map((p) => new TextDecoder().decode(p)).join("\n");
    const size = pdus.reduce((n, p) => n + p.byteLength, 0);
    this.#abort = new AbortController();
    this.#sending = fetch(this.#post, {
      method: "POST",
      body,
      headers: { "Content-Type": this.#binary ? "application/octet-stream" : "text/plain" },
      signal: this.#abort.signal,
    })
      .then((r) => {
        if (!r.ok) throw new Error(`POST ${r.status}`);
        this.#queued -= size;
        this.#sending = null;
        this.#pump();
      })
      .catch(() => {
        this.#sending = null;
        this.#closed(1006, "the stream's POST failed");
      });
  }

  #closed(code, reason) {
    if (this.readyState === CLOSED) return;
    const wasOpen = this.readyState !== CONNECTING;
    this.readyState = CLOSED;
    this.#es?.close();
    this.#abort?.abort();
    this.#queue = [];
    this.#queued = 0;
    if (!wasOpen) this.onerror?.(new Event("error"));
    this.onclose?.(new CloseEvent("close", { code, reason, wasClean: code !== 1006 }));
  }
}

// framed puts each binary PDU after its length, 4 bytes big-endian.
function framed(pdus) {
  const n = pdus.reduce((n, p) => n + 4 + p.byteLength, 0);
  const out = new Uint8Array(n);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const p of pdus) {
    view.setUint32(at, p.byteLength);
    out.set(p, at + 4);
    at += 4 + p.byteLength;
  }
  return out;
}

function hostOf(url) {
  try {
    return new URL(url, globalThis.location?.href).host;
  } catch {
    return "";
  }
}
