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

import { Emitter, SluiceError, toSluiceError } from "./lib/base.js";
import { resumeStore } from "./lib/resume.js";
import { sharedAPI } from "./lib/shared.js";
import { Subscription } from "./lib/subscription.js";
import { fallbackWebSocket, preopen, transportOf } from "./stream.js";

export { SluiceError, Subscription };

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

let loading = null;

/**
 * load fetches and starts sluice.wasm once per page (or worker, or Node.js
 * process); connect calls it. Call it yourself to start the download
 * early or to load sluice.wasm from elsewhere ({wasmURL}). A sluice.wasm
 * the page preloads by its plain name is taken over (preloaded).
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
  wasmURL = wasmURL ? String(wasmURL) : defaultWasmURL();
  if (!wasmURL) {
    throw new Error("this module has no import.meta.url (bundled as a classic script?): pass {wasmURL} to connect or load");
  }
  // sluice.wasm's download and compilation start now, beside
  // wasm_exec.js's download, rather than after it: compiling needs the
  // bytes alone, instantiating the Go object that wasm_exec.js defines.
  const module = preloaded(wasmURL) || compile(wasmURL);
  module.catch(() => {}); // reported below, once awaited
  if (typeof globalThis.Go !== "function") {
    // Defines globalThis.Go. A literal path, so that bundlers bundle it;
    // wasmExecURL is the way of older versions to load it from elsewhere.
    await (wasmExecURL ? import(/* @vite-ignore */ wasmExecURL) : import("./dist/wasm_exec.js"));
  }
  const go = new globalThis.Go();
  const instance = await WebAssembly.instantiate(await module, go.importObject);
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

/**
 * preloaded compiles the sluice.wasm that the page preloads by its plain
 * name (<link rel=preload as=fetch crossorigin href=.../sluice.wasm>),
 * which the browser reads before any script runs, when it is the build
 * that url (its hashed name) names: the edge sends the hash as its ETag.
 * Another build's (an edge upgraded between the two requests) is dropped
 * for url's own, and so is a preload that cannot be used: a failed fetch
 * (a 404 without CORS headers is one, for a page of another origin), an
 * error status, a body cut off. compile(url) then does what it does
 * without a preload, and its error, if any, says what is wrong. One of
 * another type than application/wasm, which compileStreaming refuses, is
 * compiled from its bytes, as compile does.
 */
function preloaded(url) {
  if (typeof document === "undefined") return null;
  const want = new URL(url, document.baseURI); // {wasmURL} may be relative
  const hash = /\.([0-9a-f]{16})\.wasm$/.exec(want.pathname)?.[1];
  const plain = new URL("sluice.wasm", want).href;
  const link = hash && [...document.querySelectorAll('link[rel="preload"][as="fetch"]')].find((l) => l.href === plain);
  if (!link) return null;
  return (async () => {
    const r = await fetch(plain, { credentials: "same-origin" }).catch(() => null);
    if (r?.ok && new RegExp(`^(W/)?"${hash}(-[a-z]+)?"$`).test(r.headers.get("ETag") ?? "")) {
      try {
        return await WebAssembly.compileStreaming(r);
      } catch {
        // Another type than application/wasm, which compileStreaming
        // refuses before it reads a byte (as a browser without it):
        // compiled from the bytes preloaded, not downloaded again. A body
        // cut off, or bytes that do not compile: url's own, below.
        if (!r.bodyUsed) {
          try {
            return await WebAssembly.compile(await r.arrayBuffer());
          } catch {}
        }
      }
    }
    r?.body?.cancel().catch(() => {}); // rejects when compileStreaming holds it
    return compile(url);
  })();
}

/**
 * compile fetches and compiles sluice.wasm, as it downloads where the
 * server sends the application/wasm type (compileStreaming).
 */
async function compile(url) {
  const fs = url.startsWith("file:") ? builtin("fs/promises") : null;
  if (fs) return WebAssembly.compile(await readModule(fs, url));
  const r = await fetch(url, { credentials: "same-origin" });
  if (WebAssembly.compileStreaming) {
    try {
      return await WebAssembly.compileStreaming(r);
    } catch (e) {
      // A server without the application/wasm type: fall back below.
      if (!(e instanceof TypeError)) throw e;
    }
  }
  if (!r.ok) {
    throw new Error(
      `${url}: HTTP ${r.status}${excerpt(await r.text())} (bundled? serve dist/sluice.wasm of the package there, or pass {wasmURL})`,
    );
  }
  return WebAssembly.compile(await r.arrayBuffer());
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

/** Sluice is the entry point: Sluice.connect(url, options). */
export class Sluice {
  /**
   * connect loads the WebAssembly client, opens a WebSocket to the edge
   * and authenticates; it resolves with a connected Client. url may be
   * ws(s)://, http(s):// or relative to the page ("/" is the page's edge).
   */
  static async connect(url, options = {}) {
    // {shared}: the client of the tabs' shared worker; where there is
    // none, this tab's own.
    const shared = options.shared && sharedAPI(options.wasmURL ? String(options.wasmURL) : defaultWasmURL());
    // This tab's client: its WebSocket opens now, while sluice.wasm loads,
    // and its dial takes it over (stream.js).
    const release = shared ? null : preopen(endpointURL(url, options.appkey), ["msgpack"]);
    try {
      const client = new Client(shared || (await load(options)), options);
      await client._connect(resolveURL(url));
      return client;
    } finally {
      release?.();
    }
  }

  static load = load;
}

/**
 * endpointURL is the WebSocket URL the client dials for url, as
 * wasm/client's endpointURL makes it (ws: or wss:, "/v2" unless the path
 * ends in a version, the appkey), or "" where that refuses it.
 */
function endpointURL(url, appkey) {
  try {
    const u = new URL(resolveURL(url));
    const scheme = { "ws:": "ws:", "http:": "ws:", "wss:": "wss:", "https:": "wss:" }[u.protocol];
    if (!scheme || !u.host || !appkey || typeof appkey !== "string") return "";
    u.protocol = scheme;
    const path = u.pathname.replace(/\/$/, "");
    u.pathname = /\/v[0-9]+$/.test(path) ? path : path + "/v2";
    u.searchParams.set("appkey", appkey);
    u.hash = "";
    return u.href;
  } catch {
    return "";
  }
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
  #resume = null; // where subscriptions keep their positions ({resume})

  constructor(api, options) {
    super();
    this.#api = api;
    this.#options = options;
    if (typeof options.onState === "function") this.on("state", options.onState);
    if (typeof options.onError === "function") this.on("error", options.onError);
    if (typeof options.onGap === "function") this.on("gap", options.onGap);
  }

  async _connect(url) {
    const { onState, onError, onGap, wasmURL, wasmExecURL, WebSocket, suspendOnPageHide, resume, resumeKey, shared, ...goOptions } =
      this.#options;
    this.#resume = resumeStore(resume, { url, appkey: goOptions.appkey, resumeKey });
    try {
      this.#url = url;
      this.#n = await this.#api.connect(url, goOptions, (state, transport) => {
        this.#state = state;
        // The shared worker's client says which transport it uses; a
        // client of its own knows from stream.js.
        if (transport) this.#transport = transport;
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
  #transport = ""; // the shared worker's transport; "": ask stream.js

  /**
   * transport is how the connection is carried: "websocket", or
   * "http-stream" where a WebSocket could not open (stream.js); with
   * {shared: true}, that of the shared worker's connection.
   */
  get transport() {
    return this.#transport || transportOf(this.#url);
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
    return new Subscription(this, this.#api, this.#n, channel, options || {}, handler, this.#resume);
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

export default Sluice;
