// The shared worker of {shared: true} (lib/shared.js is the tabs' side):
// one sluice.wasm and one client per edge URL and options for all the
// tabs of an origin, and one edge subscription per channel and options
// for all the tabs subscribed. It uses sluice.js's public API.
//
// Messages from a tab: {op, rid, ...}, answered with {rid, ok, value} or
// {rid, ok: false, error}; to a tab: {ev: "state", cn, state, transport},
// {ev: "batch" | "error" | "info" | "gap" | "presence", sn, ...} and
// {ev: "token", cn, tid}, which the tab answers with {op: "token", tid}.
// cn and sn are the tab's numbers for its clients and subscriptions.

import { Sluice } from "../sluice.js";
import { plainError } from "./base.js";

const clients = new Map(); // key (URL and options): Shared client
const tabs = new Map(); // port: {clients: Map<cn, Shared client>, subs: Map<sn, member>}
const tokenCalls = new Map(); // tid: {resolve, reject}
let tid = 0;
let loaded = null;

globalThis.onconnect = (ev) => {
  const port = ev.ports[0];
  port.onmessage = (m) => handle(port, m.data);
};

/** handle runs a tab's request and answers it. */
async function handle(port, m) {
  if (m.op === "token") {
    const call = tokenCalls.get(m.tid);
    tokenCalls.delete(m.tid);
    if (m.ok) call?.resolve(m.value);
    else call?.reject(m.error);
    return;
  }
  if (m.op === "bye") {
    leave(port);
    return;
  }
  // A tab back from the back/forward cache, which said bye, joins again.
  if (!tabs.has(port)) tabs.set(port, { clients: new Map(), subs: new Map() });
  try {
    const value = await run(port, m);
    port.postMessage({ rid: m.rid, ok: true, value });
  } catch (e) {
    port.postMessage({ rid: m.rid, ok: false, error: plainError(e) });
  }
}

async function run(port, m) {
  const tab = tabs.get(port);
  switch (m.op) {
    case "connect":
      return connect(port, tab, m);
    case "call": {
      const c = await clientOf(tab, m.cn);
      return c[m.method](...m.args);
    }
    case "subscribe":
      return subscribe(port, tab, m);
    case "unsubscribe":
      return unsubscribe(tab, m.sn);
    case "close":
      return release(tab, m.cn);
  }
  throw new Error(`unknown request ${m.op}`);
}

async function clientOf(tab, cn) {
  const shared = tab.clients.get(cn);
  if (!shared) throw Object.assign(new Error("sluice: the client is closed"), { code: "closed" });
  return shared.client;
}

/**
 * connect joins the client of the URL and options, made by the first tab
 * that asks for it. With a token function, the client asks a tab of its
 * own for each token (functions stay in their tab).
 */
async function connect(port, tab, m) {
  loaded = loaded || Sluice.load({ wasmURL: m.wasmURL });
  await loaded;
  const key = JSON.stringify([m.url, m.options, m.tokenFunction]);
  let shared = clients.get(key);
  if (!shared) {
    shared = { key, members: new Map(), state: "connecting", subs: new Map(), ids: new Set(), seq: 0 };
    const options = { ...m.options, suspendOnPageHide: false, onState: (s, t) => onState(shared, s, t) };
    if (m.tokenFunction) options.token = () => askToken(shared);
    shared.client = Sluice.connect(m.url, options);
    clients.set(key, shared);
    shared.client.catch(() => clients.get(key) === shared && clients.delete(key));
  }
  shared.members.set(`${id(port)}:${m.cn}`, { port, cn: m.cn });
  tab.clients.set(m.cn, shared);
  let client;
  try {
    client = await shared.client;
  } catch (e) {
    tab.clients.delete(m.cn);
    throw e;
  }
  port.postMessage({ ev: "state", cn: m.cn, state: shared.state, transport: client.transport });
}

const portIDs = new WeakMap();
let lastPortID = 0;
/** id numbers a port, for the keys of a client's members. */
function id(port) {
  if (!portIDs.has(port)) portIDs.set(port, ++lastPortID);
  return portIDs.get(port);
}

// The transport goes with each state: the tabs' clients report the
// worker's (the fallback opens in the worker, not in the tab).
function onState(shared, state, transport) {
  shared.state = state;
  for (const { port, cn } of shared.members.values()) port.postMessage({ ev: "state", cn, state, transport });
}

/** askToken calls the token function of one of the client's tabs. */
function askToken(shared) {
  const member = shared.members.values().next().value;
  if (!member) return Promise.reject(new Error("sluice: no tab left to ask for a token"));
  const t = ++tid;
  return new Promise((resolve, reject) => {
    tokenCalls.set(t, { resolve, reject });
    member.port.postMessage({ ev: "token", cn: member.cn, tid: t });
  });
}

/**
 * release leaves a tab's client: its subscriptions end for that tab, and
 * the last tab to leave closes the connection.
 */
async function release(tab, cn) {
  const shared = tab.clients.get(cn);
  if (!shared) return;
  tab.clients.delete(cn);
  for (const [sn, member] of tab.subs) {
    if (member.cn === cn) unsubscribe(tab, sn);
  }
  for (const [k, m] of shared.members) {
    if (tabs.get(m.port) === tab && m.cn === cn) shared.members.delete(k);
  }
  if (shared.members.size > 0) return;
  if (clients.get(shared.key) === shared) clients.delete(shared.key);
  try {
    await (await shared.client).close();
  } catch {
    // It never connected: nothing to close.
  }
}

/** leave releases everything of a tab that went. */
function leave(port) {
  const tab = tabs.get(port);
  if (!tab) return;
  for (const cn of [...tab.clients.keys()]) release(tab, cn);
  tabs.delete(port);
}

/**
 * subscribe joins the subscription to the channel with the same options,
 * when there is one and the tab asks for what comes next (no position, no
 * history: those need a subscription of their own, from there). Else it
 * starts one, which later tabs may join.
 */
async function subscribe(port, tab, m) {
  const c = await clientOf(tab, m.cn);
  const shared = tab.clients.get(m.cn);
  const { position, history, id: wanted, force, ...rest } = m.options || {};
  const key = JSON.stringify([m.channel, rest]);
  const member = { port, sn: m.sn, cn: m.cn, id: wanted || m.channel };
  let entry = position || history ? null : shared.subs.get(key);
  if (!entry) {
    entry = start(shared, c, m.channel, m.options || {}, member.id);
    if (!shared.subs.has(key)) {
      entry.key = key;
      shared.subs.set(key, entry);
    }
  }
  entry.members.add(member);
  tab.subs.set(m.sn, { ...member, entry, shared });
  try {
    await entry.sub.ready;
  } catch (e) {
    tab.subs.delete(m.sn);
    throw e;
  }
  if (rest.presence && entry.members.size > 1) {
    const p = entry.sub.presence();
    port.postMessage({ ev: "presence", sn: m.sn, kind: "members", value: p.members, users: p.users, connections: p.connections });
  }
  return { id: member.id, position: entry.sub.position };
}

/**
 * start subscribes for one or more tabs, under the id asked for unless the
 * client has it already (the edge needs one id per subscription).
 */
function start(shared, c, channel, options, wanted) {
  let sid = wanted;
  while (shared.ids.has(sid)) sid = `${wanted}~${++shared.seq}`;
  shared.ids.add(sid);
  const entry = { sid, members: new Set(), batch: [], key: null };
  const each = (f) => {
    for (const m of entry.members) f(m);
  };
  // A batch goes to each tab in one message, so that it is one task there.
  entry.sub = c.subscribe(channel, { ...options, id: sid }, (message, info) => {
    entry.batch.push([message, info]);
    if (!info.endOfBatch) return;
    const items = entry.batch;
    entry.batch = [];
    each((m) => m.port.postMessage({ ev: "batch", sn: m.sn, items: items.map(([v, i]) => [v, { ...i, subscriptionId: m.id }]) }));
  });
  entry.sub.on("error", (e) => {
    each((m) => m.port.postMessage({ ev: "error", sn: m.sn, error: { ...plainError(e), subscriptionId: m.id } }));
    drop(shared, entry);
  });
  for (const ev of ["info", "gap"]) {
    entry.sub.on(ev, (v) => each((m) => m.port.postMessage({ ev, sn: m.sn, value: { ...v, subscriptionId: m.id } })));
  }
  for (const kind of ["members", "join", "leave", "count"]) {
    entry.sub.on(kind, (v) => {
      const p = entry.sub.presence();
      each((m) => m.port.postMessage({ ev: "presence", sn: m.sn, kind, value: v, users: p.users, connections: p.connections }));
    });
  }
  return entry;
}

/** drop forgets a subscription that ended or that no tab wants. */
function drop(shared, entry) {
  if (entry.key && shared.subs.get(entry.key) === entry) shared.subs.delete(entry.key);
  shared.ids.delete(entry.sid);
  for (const m of entry.members) tabs.get(m.port)?.subs.delete(m.sn);
  entry.members.clear();
}

/** unsubscribe leaves a subscription; the last tab to leave ends it. */
async function unsubscribe(tab, sn) {
  const member = tab.subs.get(sn);
  if (!member) return;
  tab.subs.delete(sn);
  const { entry, shared } = member;
  for (const m of entry.members) {
    if (m.port === member.port && m.sn === sn) entry.members.delete(m);
  }
  if (entry.members.size > 0) return;
  drop(shared, entry);
  await entry.sub.unsubscribe();
}
