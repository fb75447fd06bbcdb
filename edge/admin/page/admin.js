// Sluice admin page. Everything goes through the edge's server API, which
// the admin handler calls with the session's API key (POST api/METHOD);
// the session is an HttpOnly cookie this script never sees. Text from the
// edge (channel names, messages, user ids) is only ever set as
// textContent, never parsed as HTML.

const $ = (id) => document.getElementById(id);

// el makes an element with properties (class, dataset entries as
// "data-x") and children (strings become text nodes).
function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...children);
  return e;
}

// Refresh periods: the selected channel's history every tick, the rest
// every slowEvery ticks; a hidden page polls nothing.
const tickMs = 1000;
const slowEvery = 5;
const historyKept = 200;
const channelsPage = 25;

const state = {
  app: null, // the session's appkey; null when logged out
  timer: null,
  ticks: 0,
  channel: null, // the selected channel
  cursor: null, // the position of its next message, once known
  after: "", // the channels listing's next page
  busy: new Set(), // polls in flight, by name
};

// SessionEnded is thrown by a call whose session is gone; the login form
// is showing by then.
class SessionEnded extends Error {}

async function request(path, init) {
  const resp = await fetch(path, { credentials: "same-origin", cache: "no-store", ...init });
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (resp.status === 401 && state.app !== null) {
    showLogin("Your session ended; log in again.");
    throw new SessionEnded();
  }
  if (!resp.ok) {
    const e = new Error(data && data.reason ? data.reason : `HTTP ${resp.status}`);
    e.status = resp.status;
    e.code = data && data.error;
    throw e;
  }
  return data;
}

const post = (path, body) =>
  request(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

// api calls a server API method (docs/server-api.md).
const api = (method, body = {}) => post("api/" + method, body);

function showError(err) {
  if (err instanceof SessionEnded) return;
  const b = $("error");
  b.textContent = err.code ? `${err.code}: ${err.message}` : String(err.message || err);
  b.classList.add("shown");
}

function clearError() {
  $("error").classList.remove("shown");
}

// once runs a poll unless the same one is still in flight.
async function once(name, fn) {
  if (state.busy.has(name)) return;
  state.busy.add(name);
  try {
    await fn();
  } catch (err) {
    showError(err);
  } finally {
    state.busy.delete(name);
  }
}

// ---- login ----

function showLogin(message = "") {
  state.app = null;
  clearInterval(state.timer);
  state.timer = null;
  $("main-view").hidden = true;
  $("app").hidden = $("ready").hidden = $("logout").hidden = true;
  $("login-view").hidden = false;
  $("login-error").textContent = message;
  $("key").focus();
}

function showMain(app) {
  state.app = app;
  $("login-view").hidden = true;
  $("main-view").hidden = false;
  $("app").textContent = "app " + app;
  $("app").hidden = $("ready").hidden = $("logout").hidden = false;
  state.ticks = 0;
  state.after = "";
  clearInterval(state.timer);
  state.timer = setInterval(tick, tickMs);
  refreshSlow();
}

$("login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const key = $("key").value;
  $("login").disabled = true;
  $("login-error").textContent = "";
  try {
    const { app } = await post("login", { key });
    $("key").value = "";
    showMain(app);
  } catch (err) {
    $("login-error").textContent =
      err.code === "authentication_failed" ? "Wrong key: " + err.message : err.message;
  } finally {
    $("login").disabled = false;
  }
});

$("logout").addEventListener("click", async () => {
  try {
    await post("logout", {});
  } finally {
    showLogin("Logged out.");
  }
});

// ---- polling ----

function tick() {
  if (document.hidden || state.app === null) return;
  state.ticks++;
  if (state.channel !== null) once("history", pollHistory);
  if (state.ticks % slowEvery === 0) refreshSlow();
}

function refreshSlow() {
  once("health", refreshHealth);
  once("channels", () => refreshChannels(false));
  if (state.channel !== null) once("presence", refreshPresence);
}

// ---- health ----

function stat(label, value) {
  return el("div", {}, el("dt", {}, label), el("dd", {}, String(value)));
}

async function refreshHealth() {
  const [status, info] = await Promise.all([request("status"), api("info")]);
  const ready = $("ready");
  ready.dataset.state = status.ready ? "ready" : "not-ready";
  ready.textContent = status.ready ? "edge ready" : "not ready: " + status.reason;
  $("stats").replaceChildren(
    stat("connections", info.connections),
    stat("subscriptions", info.subscriptions),
    stat("channels (app)", info.app.channels),
    stat("channels (edge)", info.channels),
    stat("messages in (app)", info.app.messages_in),
    stat("messages out (app)", info.app.messages_out),
    stat("presence members", info.presence.members),
    stat("storage", info.storage),
  );
  $("cluster").replaceChildren(...clusterLines(info));
  clearError();
}

function clusterLines(info) {
  const lines = [];
  // A log in partitions (cluster.partitions) lists each stream: journal
  // is only the first's.
  const streams = info.partitions || (info.journal ? [info.journal] : []);
  if (streams.length === 0) lines.push(el("p", {}, "In memory: no log of record, no cluster (a restart loses the channels)."));
  if (streams.length > 1) lines.push(el("p", {}, `The log is ${streams.length} partitions, each its own stream and leader.`));
  for (const j of streams) {
    const peers = (j.peers || []).map((p) => `${p.name}${p.leader ? " (leader)" : ""}${p.current ? "" : " (behind)"}`);
    lines.push(
      el("p", {}, `Stream ${j.stream} on ${j.server || "?"}: ${j.connected ? "connected" : "NOT connected"}, ` +
        `${j.available ? "available" : "NOT available (no answer from its leader)"}, leader ${j.leader || "none"}, ` +
        `${j.replicas || 1} replica(s), ${j.messages} messages, applied ${j.applied}, lag ${j.lag}.`),
    );
    if (peers.length > 0) lines.push(el("p", {}, "Stream peers: " + peers.join(", ")));
  }
  const n = info.node;
  if (n) {
    lines.push(el("p", {}, `NATS node ${n.name}` + (n.cluster ? ` of cluster ${n.cluster}` : "") +
      `: meta leader ${n.meta_leader || "none"}, peers ${(n.peers || []).join(", ") || "none"}.`));
  }
  return lines;
}

// ---- channels ----

async function refreshChannels(more) {
  const list = await api("channels", { prefix: $("prefix").value, after: more ? state.after : "", limit: channelsPage });
  const items = await Promise.all(list.channels.map(channelItem));
  if (more) $("channels").append(...items);
  else $("channels").replaceChildren(...items);
  if (!more && list.channels.length === 0) {
    $("channels").replaceChildren(el("li", { class: "muted" }, "No live channel" + ($("prefix").value ? " with this prefix." : ".")));
  }
  state.after = list.next || "";
  $("channels-more").hidden = !list.next;
}

async function channelItem(name) {
  let subs = "–";
  try {
    const c = await api("presence_stats", { channel: name });
    subs = `${c.connections} sub${c.connections === 1 ? "" : "s"}`;
  } catch (err) {
    if (err instanceof SessionEnded) throw err;
  }
  const b = el("button", { type: "button", class: "channel" + (name === state.channel ? " selected" : "") },
    el("span", { class: "name mono" }, name), el("span", { class: "subs" }, subs));
  b.dataset.channel = name;
  b.addEventListener("click", () => selectChannel(name));
  return el("li", {}, b);
}

$("channels-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  once("channels", () => refreshChannels(false));
});
$("channels-more").addEventListener("click", () => once("channels", () => refreshChannels(true)));

function selectChannel(name) {
  state.channel = name;
  state.cursor = null;
  for (const b of document.querySelectorAll("#channels .channel")) b.classList.toggle("selected", b.dataset.channel === name);
  $("channel-title").textContent = name;
  $("publish-channel").value = name;
  $("history").replaceChildren();
  $("members").replaceChildren();
  $("members-note").textContent = "";
  $("channel-counts").textContent = "";
  once("history", pollHistory);
  once("presence", refreshPresence);
}

// ---- history ----

// after is the position following pos: its offset plus one.
function after(pos) {
  const [epoch, offset] = pos.split(":");
  return `${epoch}:${BigInt(offset) + 1n}`;
}

// pollHistory shows the channel's newest messages, then, from the
// position after the last, whatever came since, page by page.
async function pollHistory() {
  const channel = state.channel;
  for (let pages = 0; pages < 10 && channel === state.channel; pages++) {
    const req = state.cursor ? { channel, position: state.cursor, limit: 100 } : { channel, count: 50 };
    let page;
    try {
      page = await api("history", req);
    } catch (err) {
      if (err.code !== "expired_position") throw err;
      // Messages expired while we looked away, or the edge restarted
      // with a new history: start again from the newest.
      state.cursor = null;
      addNote("messages were skipped: they expired before this page read them");
      continue;
    }
    if (channel !== state.channel) return;
    for (const m of page.messages) addMessage(m);
    const last = page.messages.at(-1);
    if (last) state.cursor = page.next || after(last.position);
    if (!page.next) return;
  }
}

function addMessage(m) {
  const li = el("li", { class: "message fresh" },
    el("span", { class: "position mono" }, m.position),
    el("span", { class: "body mono" }, JSON.stringify(m.message)));
  li.dataset.position = m.position;
  prepend(li);
}

function addNote(text) {
  prepend(el("li", { class: "muted" }, text));
}

function prepend(li) {
  const h = $("history");
  h.prepend(li);
  while (h.children.length > historyKept) h.lastElementChild.remove();
}

// ---- presence ----

async function refreshPresence() {
  const channel = state.channel;
  const [stats, page] = await Promise.all([
    api("presence_stats", { channel }),
    api("presence", { channel, limit: 100 }),
  ]);
  if (channel !== state.channel) return;
  $("channel-counts").textContent =
    `${stats.connections} subscriber${stats.connections === 1 ? "" : "s"} (connections), ` +
    `${stats.users} user${stats.users === 1 ? "" : "s"}`;
  $("members").replaceChildren(...page.members.map((m) => memberItem(channel, m)));
  if (page.members.length === 0) $("members").replaceChildren(el("li", { class: "muted" }, "No named member."));
  const guests = page.connections - page.members.reduce((n, m) => n + m.connections, 0);
  $("members-note").textContent = (page.next ? "The first 100 members. " : "") +
    (guests > 0 ? `${guests} guest connection${guests === 1 ? "" : "s"} (no user id) not listed.` : "");
}

function memberItem(channel, m) {
  const info = m.info === undefined ? "" : " " + JSON.stringify(m.info);
  const who = el("span", { class: "who" }, el("span", { class: "mono" }, m.user_id),
    el("span", { class: "muted" }, `${info} · ${m.connections} connection${m.connections === 1 ? "" : "s"}`));
  const kick = el("button", { type: "button", class: "danger small" }, "Disconnect");
  kick.dataset.user = m.user_id;
  kick.addEventListener("click", () => disconnect({ user: m.user_id }));
  const unsub = el("button", { type: "button", class: "quiet small" }, "Unsubscribe");
  unsub.dataset.user = m.user_id;
  unsub.addEventListener("click", () => unsubscribe(channel, m.user_id));
  const li = el("li", { class: "member" }, who, el("span", { class: "actions" }, unsub, kick));
  li.dataset.user = m.user_id;
  return li;
}

// ---- actions ----

async function disconnect(who, reason = "") {
  const out = $("disconnect-result");
  try {
    const r = await api("disconnect", { ...who, reason: reason || "disconnected by an operator" });
    const name = who.user !== undefined ? `user ${who.user}` : `connection ${who.connection}`;
    out.textContent = `Disconnected ${r.disconnected} connection${r.disconnected === 1 ? "" : "s"} of ${name} on this edge.`;
    if (state.channel !== null) once("presence", refreshPresence);
  } catch (err) {
    showError(err);
  }
}

async function unsubscribe(channel, user) {
  try {
    const r = await api("unsubscribe", { channel, user });
    $("disconnect-result").textContent = `Ended ${r.unsubscribed} subscription${r.unsubscribed === 1 ? "" : "s"} of user ${user} to ${channel} on this edge.`;
    once("presence", refreshPresence);
  } catch (err) {
    showError(err);
  }
}

$("disconnect-kind").addEventListener("change", () => {
  $("disconnect-id").placeholder = $("disconnect-kind").value === "user" ? "user id" : "connection id";
});

$("disconnect-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const id = $("disconnect-id").value;
  disconnect($("disconnect-kind").value === "user" ? { user: id } : { connection: id }, $("disconnect-reason").value);
});

// message is the textarea's JSON value, or its text when it is not JSON.
function message() {
  const text = $("publish-message").value;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

$("publish-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const out = $("publish-result");
  $("publish").disabled = true;
  out.textContent = "";
  try {
    const channel = $("publish-channel").value;
    const r = await api("publish", { channel, message: message() });
    out.textContent = "Published at " + r.position;
    if (channel === state.channel) once("history", pollHistory);
  } catch (err) {
    if (!(err instanceof SessionEnded)) out.textContent = "Refused: " + (err.code ? err.code + ": " : "") + err.message;
  } finally {
    $("publish").disabled = false;
  }
});

// ---- start ----

document.addEventListener("visibilitychange", () => {
  if (!document.hidden && state.app !== null) refreshSlow();
});

(async () => {
  try {
    const s = await request("status");
    showMain(s.app);
  } catch (err) {
    showLogin(err.status === 401 ? "" : "The edge did not answer: " + err.message);
  }
})();
