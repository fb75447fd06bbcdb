// The browser tests' hands in a page: loaded into a page of the edge by
// e2e/browser_*_test.go, it drives sluice.js the way an application would
// and keeps what happened where the test can read it. Values cross to the
// test as JSON: a Uint8Array as {"$bytes": [...]}, a BigInt as
// {"$bigint": "..."}.
window.harness = (() => {
  const h = {
    client: null,
    received: [], // {msg, position, endOfBatch} per message, in order
    states: [], // every state the client reported
    errors: [], // "error" events of the client
    gaps: [], // "gap" events of the client
    firstMessageAt: null, // performance.now() at the first message
    timings: {},
    subs: {},
  };

  const encode = (v) =>
    JSON.parse(
      JSON.stringify(v, (_, x) => {
        if (typeof x === "bigint") return { $bigint: x.toString() };
        if (x instanceof Uint8Array) return { $bytes: Array.from(x) };
        return x;
      }),
    );

  const decode = (v) => {
    if (Array.isArray(v)) return v.map(decode);
    if (v && typeof v === "object") {
      if (typeof v.$bigint === "string") return BigInt(v.$bigint);
      if (Array.isArray(v.$bytes)) return new Uint8Array(v.$bytes);
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]));
    }
    return v;
  };

  const plain = (e) => ({
    name: e && e.name,
    code: e && e.code,
    message: String(e && e.message),
    reason: (e && e.reason) || "",
    subscriptionId: (e && e.subscriptionId) || null,
  });

  // outcome runs fn and reports {ok, value} or {ok: false, error}, so a
  // refusal reaches the test as data, not as an exception text.
  const outcome = async (fn) => {
    try {
      return { ok: true, value: await fn() };
    } catch (e) {
      return { ok: false, error: plain(e) };
    }
  };

  h.connect = (url, options) =>
    outcome(async () => {
      const t0 = performance.now();
      const { Sluice } = await import("/sluice.js");
      if (!options.shared) await Sluice.load(); // shared: the worker loads it
      h.timings.loaded = performance.now();
      h.timings.loadMs = h.timings.loaded - t0;
      h.client = await Sluice.connect(url, {
        ...options,
        onState: (s) => h.states.push(s),
        onError: (e) => h.errors.push(plain(e)),
        onGap: (g) => h.gaps.push(g),
      });
      h.timings.connected = performance.now();
      return h.client.state;
    });

  // connectWithTokens connects with a token function that hands out
  // tokens one by one, asynchronously, counting the calls in tokenCalls.
  h.tokenCalls = 0;
  h.connectWithTokens = (url, options, tokens) =>
    h.connect(url, {
      ...options,
      token: async () => tokens[Math.min(h.tokenCalls++, tokens.length - 1)],
    });

  h.subscribe = (channel, options) =>
    outcome(async () => {
      const sub = h.client.subscribe(channel, options || {}, (msg, info) => {
        if (h.firstMessageAt === null) h.firstMessageAt = performance.now();
        h.received.push({ msg: encode(msg), position: info.position, endOfBatch: info.endOfBatch });
      });
      h.subs[channel] = sub;
      h.subErrors = h.subErrors || [];
      sub.on("error", (e) => h.subErrors.push(plain(e)));
      await sub.ready;
      return sub.position;
    });

  // subscribeLogged subscribes and keeps every message in sessionStorage,
  // so that what a page saw outlives the page: a page that loads again
  // (and the harness with it) appends to what the one before it logged.
  h.subscribeLogged = (channel, options) =>
    outcome(async () => {
      const log = h.logged();
      const sub = h.client.subscribe(channel, options || {}, (msg) => {
        log.push(encode(msg));
        sessionStorage.setItem("harness.log", JSON.stringify(log));
      });
      h.subs[channel] = sub;
      await sub.ready;
      return sub.position;
    });
  h.logged = () => JSON.parse(sessionStorage.getItem("harness.log") || "[]");
  h.loggedCount = () => h.logged().length;
  // resumeKeys are the keys sluice.js keeps positions under ({resume}).
  h.resumeKeys = (kind) => {
    const storage = kind === "local" ? localStorage : sessionStorage;
    return Object.keys(storage).filter((k) => k.startsWith("sluice.resume:"));
  };

  // wasmLoaded says whether this page fetched sluice.wasm itself (with
  // {shared: true} the shared worker does).
  h.wasmLoaded = () => performance.getEntriesByType("resource").some((e) => /sluice[^/]*\.wasm/.test(e.name));

  h.publish = (channel, value) => outcome(() => h.client.publish(channel, decode(value)));

  // publishBad publishes a value that has no message form.
  h.publishBad = (channel, kind) =>
    outcome(() => {
      const cycle = {};
      cycle.self = cycle;
      const values = { nan: NaN, cycle, symbol: Symbol("x") };
      return h.client.publish(channel, values[kind]);
    });

  h.position = (channel) => h.subs[channel].position;
  h.unsubscribe = (channel) => outcome(() => h.subs[channel].unsubscribe());
  h.close = () => outcome(() => h.client.close());
  h.state = () => h.client.state;
  h.count = () => h.received.length;
  h.tokenCount = () => h.tokenCalls;

  return h;
})();
