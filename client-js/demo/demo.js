// What the demo pages share: which app to use, the connection pill and the
// error banner.
import { Sluice } from "/sluice.js";

/** appkey is the page's ?appkey=, or "demo", the app `make run` serves. */
export const appkey = new URLSearchParams(location.search).get("appkey") || "demo";

/**
 * token is the page's ?token=, a JWT of the app (`sluice token --subject
 * ann --info '{"name":"Ann"}' ...`): its sub and info are who the page is
 * in the rooms' member lists. Without one the page is a guest.
 */
export const token = new URLSearchParams(location.search).get("token") || undefined;

/** showError shows a problem at the top of the page. */
export function showError(message) {
  const el = document.getElementById("error");
  el.textContent = message;
  el.classList.add("shown");
}

/** hideError hides the banner again. */
export function hideError() {
  document.getElementById("error").classList.remove("shown");
}

/**
 * showState sets the state pill (#state): its color follows state (a
 * connection state), its text is label, by default the state itself, and
 * says when the connection is carried by HTTP streaming (transport), the
 * client's fallback where a WebSocket cannot open.
 */
export function showState(state, label = state, transport = "websocket") {
  const pill = document.getElementById("state");
  pill.dataset.state = state;
  pill.textContent = state === "connected" && transport === "http-stream" ? `${label} (HTTP streaming)` : label;
}

/**
 * connect connects to the edge that served the page and keeps the state
 * pill (#state) current.
 */
export async function connect() {
  const show = (state, transport) => showState(state, state, transport);
  show("connecting");
  try {
    const client = await Sluice.connect("/", { appkey, token, onState: show });
    show(client.state, client.transport);
    return client;
  } catch (e) {
    show("closed");
    showError(`Could not connect (${e.code}): ${e.message}`);
    throw e;
  }
}

/** formatNumber prints 1234567 as "1.23M" and 1000 as "1k". */
export function formatNumber(n, unit = "") {
  const abs = Math.abs(n);
  const scale = [
    [1e12, "T"],
    [1e9, "G"],
    [1e6, "M"],
    [1e3, "k"],
  ].find(([s]) => abs >= s);
  if (!scale) return `${Number.isInteger(n) ? n : n.toFixed(1)}${unit}`;
  return `${Number((n / scale[0]).toPrecision(3))}${scale[1]}${unit}`;
}

/** formatBytes prints 1536 as "1.5 KiB" and 297984 as "291 KiB". */
export function formatBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 || n >= 100 || Number.isInteger(n) ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}
