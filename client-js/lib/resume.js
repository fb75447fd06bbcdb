// Positions kept across page loads ({resume: "session" | "local"}): each
// live subscription's position, after every batch its handler took, in
// sessionStorage (this tab, until it closes) or localStorage (every tab
// of the origin, until cleared). A page that loads again subscribes from
// there: it misses nothing the edge still holds and gets nothing twice.
// Internal: Client and Subscription use it.

import { SluiceError } from "./base.js";

/** prefix starts every key this module writes. */
const prefix = "sluice.resume:";

/**
 * resumeStore returns the positions of one client's subscriptions in the
 * storage kind names, or null when kind is not set. The key holds the
 * edge's URL, the appkey, the scope (options.resumeKey, by default the
 * page's path) and the subscription id, so that other edges, apps, pages
 * and channels keep positions of their own. Where the storage cannot be
 * used (a worker has none; a browser may refuse it), it warns once and
 * keeps nothing: the client works, without resume.
 */
export function resumeStore(kind, { url, appkey, resumeKey }) {
  if (kind === undefined || kind === null || kind === false) return null;
  if (kind !== "session" && kind !== "local") {
    throw new SluiceError(`sluice: resume ${JSON.stringify(kind)}: want "session" or "local"`, { code: "invalid_options" });
  }
  const scope = resumeKey ?? (typeof location === "undefined" ? "" : location.pathname);
  let storage = null;
  try {
    storage = kind === "session" ? globalThis.sessionStorage : globalThis.localStorage;
  } catch {
    // A SecurityError where the user blocks storage for the site.
  }
  if (!storage) {
    console.warn(`sluice: resume "${kind}": no ${kind}Storage here; subscriptions start without a saved position`);
    return null;
  }
  return new ResumeStore(storage, prefix + JSON.stringify([url, appkey, String(scope)]) + ":");
}

/** ResumeStore reads and writes the positions of one client's subscriptions. */
class ResumeStore {
  #storage;
  #prefix;
  #warned = false;

  constructor(storage, keyPrefix) {
    this.#storage = storage;
    this.#prefix = keyPrefix;
  }

  /** get returns the position saved for a subscription id, or null. */
  get(id) {
    try {
      return this.#storage.getItem(this.#prefix + id);
    } catch {
      return null;
    }
  }

  /** set saves a subscription's position. */
  set(id, position) {
    if (!position) return;
    try {
      this.#storage.setItem(this.#prefix + id, position);
    } catch (e) {
      // Quota exceeded: the page filled its storage with other things.
      if (!this.#warned) console.warn(`sluice: could not save the position of ${id}: ${e && e.message}`);
      this.#warned = true;
    }
  }

  /** remove forgets a subscription's position: it ended for good. */
  remove(id) {
    try {
      this.#storage.removeItem(this.#prefix + id);
    } catch {
      // Nothing to forget where storage fails.
    }
  }
}
