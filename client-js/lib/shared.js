// The tab's side of {shared: true}: the client runs in a SharedWorker
// (lib/worker.js), so that the tabs of one origin share one WebSocket,
// one sluice.wasm and one subscription per channel. This module gives
// Client and Subscription the same calls as sluice.wasm's API, made over
// the worker's port. Internal: Sluice.connect uses it.

import { SluiceError, plainError } from "./base.js";

let shared; // the tab's one SharedAPI (undefined: not made yet; null: none here)

/**
 * sharedAPI returns the tab's connection to the shared worker, made on
 * first use, or null where there is none: no SharedWorker (some mobile
 * browsers), or one the browser refuses to start (sluice.js loaded from
 * another origin than the page's: a shared worker must be the page's).
 * The caller then connects from the tab, with the same API.
 */
export function sharedAPI(wasmURL) {
  if (shared !== undefined) return shared;
  shared = null;
  if (typeof SharedWorker !== "function") return null;
  let worker;
  try {
    // The literal form bundlers recognize, to bundle the worker too.
    worker = new SharedWorker(new URL("./worker.js", import.meta.url), { type: "module", name: "sluice" });
  } catch (e) {
    console.warn(`sluice: no shared worker (${e && e.message}): this tab connects on its own`);
    return null;
  }
  shared = new SharedAPI(worker, wasmURL);
  return shared;
}

/** SharedAPI is sluice.wasm's API, over the shared worker's port. */
class SharedAPI {
  #port;
  #wasmURL;
  #n = 0; // the last client or subscription number given out
  #pending = new Map(); // request number: {resolve, reject}
  #clients = new Map(); // client number: {state, onState, token}
  #subs = new Map(); // subscription number: {position, callbacks}
  #failed = null; // why the worker failed to start, once it did

  constructor(worker, wasmURL) {
    this.#wasmURL = wasmURL;
    this.#port = worker.port;
    this.#port.onmessage = (ev) => this.#receive(ev.data);
    worker.addEventListener("error", (ev) => this.#fail(ev.message || "the shared worker failed to start"));
    // A tab that goes (closed, reloaded, navigated away) leaves the
    // worker's clients and subscriptions; the last one to leave closes
    // the connection. One the back/forward cache keeps (persisted) leaves
    // too, frozen, and comes back: its clients join again and its
    // subscriptions resume from their positions.
    addEventListener("pagehide", (ev) => {
      this.#port.postMessage({ op: "bye" });
      if (!ev.persisted) return;
      for (const c of this.#clients.values()) this.#setState(c, "disconnected");
    });
    addEventListener("pageshow", (ev) => {
      if (ev.persisted) this.#back().catch((e) => console.error("sluice: back from the back/forward cache:", e));
    });
  }

  #fail(message) {
    this.#failed = new SluiceError(`sluice: the shared worker: ${message}`, { code: "load_failed" });
    for (const p of this.#pending.values()) p.reject(this.#failed);
    this.#pending.clear();
  }

  #request(message) {
    if (this.#failed) return Promise.reject(this.#failed);
    const rid = ++this.#n;
    return new Promise((resolve, reject) => {
      this.#pending.set(rid, { resolve, reject });
      this.#port.postMessage({ ...message, rid });
    });
  }

  #receive(m) {
    if (m.rid !== undefined) {
      const p = this.#pending.get(m.rid);
      this.#pending.delete(m.rid);
      if (m.ok) p?.resolve(m.value);
      else p?.reject(new SluiceError(m.error.message, m.error));
      return;
    }
    if (m.ev === "state") {
      const c = this.#clients.get(m.cn);
      if (c) this.#setState(c, m.state, m.transport);
      return;
    }
    if (m.ev === "token") {
      this.#token(m);
      return;
    }
    const s = this.#subs.get(m.sn);
    if (s) this.#event(m.sn, s, m);
  }

  /** setState tells the tab's client a new state, or a new transport. */
  #setState(c, state, transport = c.transport) {
    if (c.state === state && c.transport === transport) return;
    c.state = state;
    c.transport = transport;
    c.onState(state, transport);
  }

  /**
   * back joins the worker again after the back/forward cache: each client
   * connects, each subscription resumes after the last batch this tab
   * handled (a subscription of its own, from there).
   */
  async #back() {
    for (const [cn, c] of this.#clients) {
      this.#setState(c, "reconnecting");
      await this.#request({ op: "connect", cn, ...c.args });
    }
    for (const [sn, s] of this.#subs) {
      const options = { ...s.args.options, history: undefined, position: s.position || s.args.options.position };
      await this.#request({ op: "subscribe", sn, cn: s.args.cn, channel: s.args.channel, options });
    }
  }

  /** event hands a subscription's event to its callbacks. */
  #event(sn, s, m) {
    const cb = s.callbacks;
    switch (m.ev) {
      case "batch":
        // A whole batch in one task, as in a tab: a page cannot unload
        // inside it, so a position saved ({resume}) after it is exact.
        for (const [message, info] of m.items) {
          if (info.endOfBatch) s.position = info.position;
          cb.onMessage(message, info);
        }
        break;
      case "error":
        this.#subs.delete(sn);
        cb.onError(m.error);
        break;
      case "info":
        s.position = m.value.position || s.position;
        cb.onInfo(m.value);
        break;
      case "gap":
        s.position = m.value.resumed || s.position;
        cb.onGap(m.value);
        break;
      case "presence":
        cb.onPresence(m.kind, m.value, m.users, m.connections);
        break;
    }
  }

  /** token answers the worker's call for a token, from this tab's function. */
  async #token(m) {
    try {
      const fn = this.#clients.get(m.cn)?.token;
      this.#port.postMessage({ op: "token", tid: m.tid, ok: true, value: await fn() });
    } catch (e) {
      this.#port.postMessage({ op: "token", tid: m.tid, ok: false, error: plainError(e) });
    }
  }

  async connect(url, options, onState) {
    const cn = ++this.#n;
    const { token, ...rest } = options;
    const tokenFunction = typeof token === "function";
    const args = { url, wasmURL: this.#wasmURL, tokenFunction, options: tokenFunction ? rest : options };
    this.#clients.set(cn, { state: "connecting", onState, token, args });
    onState("connecting");
    try {
      await this.#request({ op: "connect", cn, ...args });
    } catch (e) {
      this.#clients.delete(cn);
      throw e;
    }
    return cn;
  }

  state(cn) {
    return this.#clients.get(cn)?.state ?? "closed";
  }

  publish(cn, channel, message, options) {
    return this.#request({ op: "call", cn, method: "publish", args: [channel, message, options] });
  }

  write(cn, channel, message, options) {
    return this.#request({ op: "call", cn, method: "write", args: [channel, message, options] });
  }

  delete(cn, channel) {
    return this.#request({ op: "call", cn, method: "delete", args: [channel] });
  }

  read(cn, channel, options) {
    return this.#request({ op: "call", cn, method: "read", args: [channel, options] });
  }

  presence(cn, channel, options) {
    return this.#request({ op: "call", cn, method: "presence", args: [channel, options] });
  }

  async subscribe(cn, channel, options, onMessage, onError, onInfo, onGap, onPresence) {
    const sn = ++this.#n;
    const s = { position: null, callbacks: { onMessage, onError, onInfo, onGap, onPresence }, args: { cn, channel, options } };
    this.#subs.set(sn, s);
    try {
      const r = await this.#request({ op: "subscribe", cn, sn, channel, options });
      s.position = s.position || r.position;
      return { sub: sn, id: r.id, position: r.position };
    } catch (e) {
      this.#subs.delete(sn);
      throw e;
    }
  }

  position(sn) {
    return this.#subs.get(sn)?.position ?? null;
  }

  async unsubscribe(sn) {
    if (!this.#subs.has(sn)) return;
    this.#subs.delete(sn);
    await this.#request({ op: "unsubscribe", sn });
  }

  async close(cn) {
    const c = this.#clients.get(cn);
    if (!c) return;
    await this.#request({ op: "close", cn });
    this.#clients.delete(cn);
    if (c.state !== "closed") c.onState("closed", c.transport);
  }
}
