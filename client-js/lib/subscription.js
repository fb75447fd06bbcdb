// A live subscription (Client.subscribe). Internal: import Subscription
// from sluice.js.

import { Emitter, SluiceError, toSluiceError } from "./base.js";

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

  // With {resume}: where this subscription's position is saved (null
  // without), and the key it is saved under. A prefix subscription has
  // no one position (they are per channel), so it is never resumed.
  #resume = null;
  #key = "";

  constructor(client, api, cn, channel, options, handler, resume = null) {
    super();
    if (typeof handler !== "function") throw new TypeError("subscribe needs a handler function");
    this.#client = client;
    this.#api = api;
    this.channel = channel;
    this.id = options.id || channel;
    this.#position = options.position || null;
    this.#key = this.id;
    if (resume && !options.prefix) this.#resume = resume;
    const callbacks = this.#callbacks(handler);
    // A saved position takes the place of history: what the page did not
    // see yet is after it. The application's own position comes first.
    const saved = this.#resume && !options.position ? this.#resume.get(this.#key) : null;
    let started = this.#start(cn, channel, saved ? { ...options, history: undefined, position: saved } : options, callbacks);
    if (saved) started = started.catch((e) => this.#restart(e, saved, cn, channel, options, callbacks));
    this.ready = started.then(
      (r) => {
        this.#n = r.sub;
        this.id = r.id;
        if (this.#state === "pending") this.#state = "live";
        this.#position = this.#position || r.position;
        this.#save();
        return this;
      },
      (e) => {
        const err = toSluiceError(e);
        err.subscriptionId = err.subscriptionId || this.id;
        this.#resume?.remove(this.#key);
        this.#end(err);
        throw err;
      },
    );
    // Refusals are reported as "error" events; awaiting ready is optional,
    // so an ignored ready must not show up as an unhandled rejection.
    this.ready.catch(() => {});
  }

  #start(cn, channel, options, cb) {
    return this.#api.subscribe(cn, channel, options, cb.onMessage, cb.onError, cb.onInfo, cb.onGap, cb.onPresence);
  }

  /**
   * restart subscribes again as the application asked when the edge no
   * longer has the saved position (older than the channel's retention):
   * the page was away too long to miss nothing, which a "gap" event says,
   * as after a reconnect. Other refusals stand.
   */
  async #restart(e, saved, cn, channel, options, cb) {
    if (e?.code !== "expired_position") throw e;
    this.#resume.remove(this.#key);
    const r = await this.#start(cn, channel, options, cb);
    cb.onGap({
      subscriptionId: r.id,
      channel,
      requested: saved,
      resumed: r.position,
      missedMessageCount: null,
      reason: "the position saved before the page loaded again has expired",
    });
    return r;
  }

  /**
   * save keeps where the subscription would continue, with {resume}: after
   * the last batch handed to the handler. Called in the same task as the
   * handler, so a page unloading between the two cannot happen.
   */
  #save(position = this.position) {
    if (this.#resume && this.#state !== "ended") this.#resume.set(this.#key, position);
  }

  /** callbacks are what the WebAssembly side calls for this subscription. */
  #callbacks(handler) {
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
      if (info.endOfBatch) this.#save(info.position);
    };
    const onError = (e) => {
      const err = toSluiceError(e);
      err.subscriptionId = err.subscriptionId || this.id;
      this.#resume?.remove(this.#key);
      this.#end(err);
    };
    // A fast_forward: the subscription moved past messages; the position
    // after it is where to continue.
    const onInfo = (info) => {
      this.emit("info", info);
      this.#saveSoon();
    };
    // A gap: the subscription carries on, but messages may be missing
    // (after a reconnect whose position the edge no longer had, unless
    // strict). Heard on the subscription and on its client.
    const onGap = (gap) => {
      this.emit("gap", gap);
      this.#client.emit("gap", gap);
      this.#saveSoon();
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
    return { onMessage, onError, onInfo, onGap, onPresence };
  }

  /**
   * saveSoon saves the position once the WebAssembly side has moved it past
   * a fast_forward or gap, which it does after their callbacks return; a
   * microtask runs before any other task, so before the page can unload.
   */
  #saveSoon() {
    if (this.#resume) queueMicrotask(() => this.#save());
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
    this.#resume?.remove(this.#key); // ended by the application: nothing to resume
    this.#resume = null; // nor to save from a batch that comes meanwhile
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
