// Sluice for the browser, Web Workers and Node.js: live channels with
// automatic reconnect and gap-free resume. The client itself is Go
// compiled to WebAssembly (sluice.wasm, with the wasm_exec.js of the same
// Go release); this module loads it once and gives it a Promise and event
// API.
//
//   import { Sluice } from "/sluice.js";
//   const client = await Sluice.connect("wss://edge.example.com", {
//     appkey: "demo",
//     onState: (state) => { ... }, // connecting, connected, disconnected, reconnecting, closed
//   });
//   const sub = client.subscribe("chat", { history: { count: 20 } }, (msg, info) => { ... });
//   await client.publish("chat", { text: "hi" });
//
// Types and documentation: sluice.d.ts. No dependencies, no build step.

import { fallbackWebSocket, transportOf } from "./stream.js";

/**
 * defaultWasmURL is where sluice.wasm is unless {wasmURL} says: beside this
 * module, in dist/. Written as the literal new URL("...", import.meta.url),
 * which Vite and webpack recognize and turn into an asset they emit with
 * the bundle; esbuild leaves it as it is (copy dist/sluice.wasm beside the
 * bundle, or import it with the file loader and pass {wasmURL}: see the
 * README). null where import.meta.url is not set (a bundle in IIFE format).
 */
function defaultWasmURL() {
  try {
    return new URL("./dist/sluice.wasm", import.meta.url).href;
  } catch {
    return null;
  }
}

/** The states a client goes through. */
export const States = Object.freeze(["connecting", "connected", "disconnected", "reconnecting", "closed"]);

/**
 * The error of every failed call and "error" event. code is what to
 * branch on: an RTM code from the edge (authorization_denied,
 * authentication_failed, expired_position, out_of_sync, invalid_appkey,
 * ...) or one of the client's own (network, refused, closed,
 * disconnected, timeout, invalid_options, invalid_url, invalid_value,
 * handler_error, internal_error, load_failed, error): see sluice.d.ts.
 */
export class SluiceError extends Error {
  constructor(message, { code = "error", reason = "", position = null, subscriptionId = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "SluiceError";
    this.code = code;
    this.reason = reason;
    this.position = position;
    this.subscriptionId = subscriptionId;
  }
}

/** toSluiceError turns what the WebAssembly side rejects with into a SluiceError. */
function toSluiceError(e) {
  if (e instanceof SluiceError) return e;
  if (e && typeof e === "object") {
    return new SluiceError(String(e.message || e), {
      code: e.code || "error",
      reason: e.reason || "",
      position: e.position || null,
      subscriptionId: e.subscriptionId || null,
      cause: e,
    });
  }
  return new SluiceError(String(e));
}

let loading = null;

/**
 * load fetches and starts sluice.wasm once per page (or worker, or Node.js
 * process); connect calls it. Call it yourself to start the download
 * early or to load sluice.wasm from elsewhere ({wasmURL}).
 */
export function load(options = {}) {
  if (!loading) {
    try {
      installWebSocket(options.WebSocket);
    } catch (e) {
      return Promise.reject(e);
    }
    loading = boot(options).catch((e) => {
      loading = null; // let a later call try again
      throw new SluiceError(`sluice: could not load the WebAssembly client: ${e && e.message ? e.message : e}`, {
        code: "load_failed",
        cause: e,
      });
    });
  }
  return loading;
}

/**
 * installWebSocket makes sure there is a globalThis.WebSocket, which the
 * client looks up when sluice.wasm starts. Browsers, workers, Deno, Bun
 * and Node.js 22 have one, which is used; Node.js 20 has none (unless run
 * with --experimental-websocket), so the caller passes a class with the
 * standard API, such as the ws package's, and it is installed there.
 */
function installWebSocket(given) {
  if (typeof globalThis.WebSocket === "function") return;
  if (typeof given !== "function") {
    throw new SluiceError(
      'sluice: this runtime has no WebSocket (Node.js before 22): pass one, as {WebSocket} (`import { WebSocket } from "ws"`)',
      { code: "invalid_options" },
    );
  }
  globalThis.WebSocket = given;
}

async function boot({ wasmURL, wasmExecURL }) {
  if (typeof globalThis.Go !== "function") {
    // Defines globalThis.Go. A literal path, so that bundlers bundle it;
    // wasmExecURL is the way of older versions to load it from elsewhere.
    await (wasmExecURL ? import(/* @vite-ignore */ wasmExecURL) : import("./dist/wasm_exec.js"));
  }
  wasmURL = wasmURL ? String(wasmURL) : defaultWasmURL();
  if (!wasmURL) {
    throw new Error("this module has no import.meta.url (bundled as a classic script?): pass {wasmURL} to connect or load");
  }
  const go = new globalThis.Go();
  const { instance } = await instantiate(wasmURL, go.importObject);
  const api = new Promise((resolve) => {
    globalThis.__sluiceBoot = resolve;
  });
  // sluice.wasm takes the WebSocket class as it starts (go.run's
  // synchronous part): it gets one that falls back to HTTP streaming
  // (stream.js), and the page's own is put back at once.
  const pageWebSocket = globalThis.WebSocket;
  globalThis.WebSocket = fallbackWebSocket(pageWebSocket);
  let running;
  try {
    running = go.run(instance);
  } finally {
    globalThis.WebSocket = pageWebSocket;
  }
  running.then(() => {
    console.error("sluice: the WebAssembly client exited; reload the page to reconnect");
  });
  return api;
}

async function instantiate(url, imports) {
  const fs = url.startsWith("file:") ? builtin("fs/promises") : null;
  if (fs) return WebAssembly.instantiate(await readModule(fs, url), imports);
  const response = fetch(url, { credentials: "same-origin" });
  if (WebAssembly.instantiateStreaming) {
    try {
      return await WebAssembly.instantiateStreaming(response, imports);
    } catch (e) {
      // A server without the application/wasm type: fall back below.
      if (!(e instanceof TypeError)) throw e;
    }
  }
  const r = await response;
  if (!r.ok) {
    throw new Error(
      `${url}: HTTP ${r.status}${excerpt(await r.text())} (bundled? serve dist/sluice.wasm of the package there, or pass {wasmURL})`,
    );
  }
  return WebAssembly.instantiate(await r.arrayBuffer(), imports);
}

/**
 * excerpt is the start of an error page, as text on one line, for an error
 * message: enough to tell a proxy's page from the server's (an edge's
 * says what to build), not a whole HTML document.
 */
function excerpt(body) {
  const text = body
    .replace(/<(script|style)[^]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (!text) return "";
  return `: "${text.length > 160 ? text.slice(0, 160) + "..." : text}"`;
}

/**
 * builtin returns a module of Node.js (or of Bun or Deno, which offer the
 * same call), or null elsewhere. process.getBuiltinModule (Node.js 20.16,
 * 22.3) rather than import("node:..."), which bundlers for the browser
 * refuse to resolve.
 */
function builtin(name) {
  const p = globalThis.process;
  return typeof p?.getBuiltinModule === "function" ? p.getBuiltinModule(name) : null;
}

/**
 * readModule reads sluice.wasm from a file: URL, where fetch cannot read
 * (Node.js): the package's own dist/sluice.wasm, by default. A checkout of
 * Sluice holds only dist/sluice.wasm.br until `make wasm` (or npm's
 * install of the folder) writes it: that is decoded instead.
 */
async function readModule(fs, url) {
  try {
    return await fs.readFile(new URL(url));
  } catch (e) {
    if (e?.code !== "ENOENT") throw e;
    let br;
    try {
      br = await fs.readFile(new URL(url + ".br"));
    } catch {
      throw new Error(`${e.message} (in a checkout of Sluice, run \`make wasm\`; or pass {wasmURL})`, { cause: e });
    }
    return builtin("zlib").brotliDecompressSync(br);
  }
}

/** Emitter is the small event registry of clients and subscriptions. */
class Emitter {
  #listeners = new Map();

  /** on registers a listener and returns a function that removes it. */
  on(event, fn) {
    if (typeof fn !== "function") throw new TypeError("listener must be a function");
    if (!this.#listeners.has(event)) this.#listeners.set(event, new Set());
    this.#listeners.get(event).add(fn);
    return () => this.off(event, fn);
  }

  /** off removes a listener. */
  off(event, fn) {
    this.#listeners.get(event)?.delete(fn);
  }

  /** emit calls the listeners; one that throws does not stop the others. */
  emit(event, ...args) {
    const set = this.#listeners.get(event);
    if (!set || set.size === 0) return false;
    for (const fn of [...set]) {
      try {
        fn(...args);
      } catch (e) {
        queueMicrotask(() => {
          throw e; // reported by the browser as an uncaught error, like any listener's
        });
      }
    }
    return true;
  }
}

/** Sluice is the entry point: Sluice.connect(url, options). */
export class Sluice {
  /**
   * connect loads the WebAssembly client, opens a WebSocket to the edge
   * and authenticates; it resolves with a connected Client. url may be
   * ws(s)://, http(s):// or relative to the page ("/" is the page's edge).
   */
  static async connect(url, options = {}) {
    const api = await load(options);
    const client = new Client(api, options);
    await client._connect(resolveURL(url));
    return client;
  }

  static load = load;
}

/** resolveURL makes a URL absolute against the page. */
function resolveURL(url) {
  const base = typeof location === "undefined" ? undefined : location.href;
  return new URL(url ?? "/", base).href;
}

/** Client is one connection to an edge, kept up until close(). */
export class Client extends Emitter {
  #api;
  #options;
  #n = 0;
  #state = "connecting";

  constructor(api, options) {
    super();
    this.#api = api;
    this.#options = options;
    if (typeof options.onState === "function") this.on("state", options.onState);
    if (typeof options.onError === "function") this.on("error", options.onError);
    if (typeof options.onGap === "function") this.on("gap", options.onGap);
  }

  async _connect(url) {
    const { onState, onError, onGap, wasmURL, wasmExecURL, WebSocket, suspendOnPageHide, ...goOptions } = this.#options;
    try {
      this.#url = url;
      this.#n = await this.#api.connect(url, goOptions, (state) => {
        this.#state = state;
        this.emit("state", state, this.transport);
      });
    } catch (e) {
      throw toSluiceError(e);
    }
    if (suspendOnPageHide !== false) this.#watchPage();
  }

  // A page going into the back/forward cache (pagehide with persisted)
  // is frozen, not closed: its WebSocket would stay open, and its user
  // present, until the tab closes. The client closes the connection
  // then, and when the page comes back (pageshow with persisted)
  // reconnects and resubscribes every subscription from its position.
  #pageListeners = null;

  #watchPage() {
    // A worker has no pages; a sluice.wasm older than this module, no suspend.
    if (typeof addEventListener !== "function" || typeof this.#api.suspend !== "function") return;
    const hide = (ev) => {
      if (ev.persisted) this.#api.suspend(this.#n);
    };
    const show = (ev) => {
      if (ev.persisted) this.#api.resume(this.#n);
    };
    addEventListener("pagehide", hide);
    addEventListener("pageshow", show);
    this.#pageListeners = { hide, show };
  }

  #unwatchPage() {
    const l = this.#pageListeners;
    if (!l) return;
    removeEventListener("pagehide", l.hide);
    removeEventListener("pageshow", l.show);
    this.#pageListeners = null;
  }

  #url = "";

  /**
   * transport is how the connection is carried: "websocket", or
   * "http-stream" where a WebSocket could not open (stream.js).
   */
  get transport() {
    return transportOf(this.#url);
  }

  /** state is the connection state now. */
  get state() {
    return this.#n ? this.#api.state(this.#n) : this.#state;
  }

  /**
   * publish sends a message and resolves with its position ("EPOCH:OFFSET");
   * options.excludeSelf keeps it from this client's own subscriptions.
   */
  publish(channel, message, options = {}) {
    return this.#call(() => this.#api.publish(this.#n, channel, message, options));
  }

  /** write stores a message like publish (RTM's key-value name for it). */
  write(channel, message, options = {}) {
    return this.#call(() => this.#api.write(this.#n, channel, message, options));
  }

  /** delete publishes null, RTM's way of deleting a key. */
  delete(channel) {
    return this.#call(() => this.#api.delete(this.#n, channel));
  }

  /** read resolves with {message, position}: the newest message, or the one at options.position. */
  read(channel, options = {}) {
    return this.#call(() => this.#api.read(this.#n, channel, options));
  }

  /**
   * subscribe starts a subscription and returns it at once; its ready
   * Promise settles when the edge accepted or refused it. handler(message,
   * info) gets every message, in order, once, across reconnects.
   */
  subscribe(channel, options, handler) {
    if (typeof options === "function") [options, handler] = [{}, options];
    return new Subscription(this, this.#api, this.#n, channel, options || {}, handler);
  }

  /**
   * presence resolves with a page of a channel's members from the edge,
   * {members: [{userId, info, connections}], users, connections, next}:
   * up to options.limit (default 100, at most 1000) whose user ids sort
   * after options.after; next, when not null, is the after of the next
   * page. The role needs the presence permission on the channel.
   */
  presence(channel, options = {}) {
    return this.#call(() => this.#api.presence(this.#n, channel, options));
  }

  /** close closes the connection and ends every subscription; it is idempotent. */
  close() {
    this.#unwatchPage();
    return this.#call(() => this.#api.close(this.#n));
  }

  async #call(fn) {
    try {
      return await fn();
    } catch (e) {
      throw toSluiceError(e);
    }
  }
}

/** Subscription is a live subscription; see Client.subscribe. */
export class Subscription extends Emitter {
  #api;
  #client;
  #n = 0;
  #position = null;
  #state = "pending";
  #error = null;
  // With presence: the members by user id and the counts, kept from the
  // events (which may come before ready resolves).
  #members = new Map();
  #users = 0;
  #connections = 0;

  constructor(client, api, cn, channel, options, handler) {
    super();
    if (typeof handler !== "function") throw new TypeError("subscribe needs a handler function");
    this.#client = client;
    this.#api = api;
    this.channel = channel;
    this.id = options.id || channel;
    this.#position = options.position || null;
    const onMessage = (message, info) => {
      if (info.endOfBatch) this.#position = info.position;
      try {
        handler(message, info);
      } catch (e) {
        this.#report(new SluiceError(`sluice: the handler of ${this.id} threw: ${e && e.message ? e.message : e}`, {
          code: "handler_error",
          subscriptionId: this.id,
          cause: e,
        }));
      }
    };
    const onError = (e) => {
      const err = toSluiceError(e);
      err.subscriptionId = err.subscriptionId || this.id;
      this.#end(err);
    };
    const onInfo = (info) => this.emit("info", info);
    // A gap: the subscription carries on, but messages may be missing
    // (after a reconnect whose position the edge no longer had, unless
    // strict). Heard on the subscription and on its client.
    const onGap = (gap) => {
      this.emit("gap", gap);
      this.#client.emit("gap", gap);
    };
    // With options.presence: "members" once the channel's members are
    // known, then "join" and "leave" for each change (after a reconnect,
    // only what changed meanwhile), and "count" when guests (connections
    // without a user id) come or go.
    const onPresence = (kind, value, users, connections) => {
      this.#users = users;
      this.#connections = connections;
      if (kind === "members") this.#members = new Map(value.map((m) => [m.userId, m]));
      else if (kind === "join") this.#members.set(value.userId, value);
      else if (kind === "leave") this.#members.delete(value.userId);
      if (kind === "count") this.emit("count", { users, connections });
      else this.emit(kind, value);
    };
    this.ready = api.subscribe(cn, channel, options, onMessage, onError, onInfo, onGap, onPresence).then(
      (r) => {
        this.#n = r.sub;
        this.id = r.id;
        if (this.#state === "pending") this.#state = "live";
        this.#position = this.#position || r.position;
        return this;
      },
      (e) => {
        const err = toSluiceError(e);
        err.subscriptionId = err.subscriptionId || this.id;
        this.#end(err);
        throw err;
      },
    );
    // Refusals are reported as "error" events; awaiting ready is optional,
    // so an ignored ready must not show up as an unhandled rejection.
    this.ready.catch(() => {});
  }

  /** state is "pending" (not yet accepted), "live" or "ended". */
  get state() {
    return this.#state;
  }

  /** error is why the subscription ended because of the edge, else null. */
  get error() {
    return this.#error;
  }

  /**
   * position is where the subscription would continue: after the last
   * batch of messages handed to the handler. Subscribing again there
   * ({position}) continues without gap or duplicate.
   */
  get position() {
    if (this.#n && this.#state === "live") {
      const p = this.#api.position(this.#n);
      if (p) this.#position = p;
    }
    return this.#position;
  }

  /**
   * presence returns the channel's members as this subscription knows them
   * (subscribe with {presence: true}): {members: [{userId, info,
   * connections}] in user id order, users, connections}. A user with
   * several connections is one member.
   */
  presence() {
    const members = [...this.#members.values()].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
    return { members, users: this.#users, connections: this.#connections };
  }

  /** unsubscribe ends the subscription here and on the edge. */
  async unsubscribe() {
    try {
      await this.ready;
    } catch {
      return; // never started
    }
    const p = this.position;
    try {
      await this.#api.unsubscribe(this.#n);
    } catch (e) {
      throw toSluiceError(e);
    } finally {
      this.#position = p;
      this.#state = "ended";
    }
  }

  #end(err) {
    if (this.#state === "ended") return;
    this.#state = "ended";
    this.#error = err;
    this.#report(err);
  }

  #report(err) {
    const heard = this.emit("error", err);
    if (!this.#client.emit("error", err) && !heard) {
      console.error(err); // nobody listens: never fail silently
    }
  }
}

export default Sluice;
