// The parts every module of the client shares: its error and its event
// registry. Internal: import them from sluice.js.

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
export function toSluiceError(e) {
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

/** plainError makes an error something postMessage can copy (lib/shared.js). */
export function plainError(e) {
  return {
    message: String(e?.message ?? e),
    code: e?.code || "error",
    reason: e?.reason || "",
    position: e?.position || null,
    subscriptionId: e?.subscriptionId || null,
  };
}

/** Emitter is the small event registry of clients and subscriptions. */
export class Emitter {
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
