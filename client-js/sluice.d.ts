// Type declarations of sluice.js, the JavaScript client of Sluice (browsers,
// Web Workers, Node.js).

/**
 * A message: any value of Sluice's data model. Objects and arrays nest up
 * to 64 levels. Binary data is a Uint8Array (an ArrayBuffer or another
 * typed array is sent as its bytes). Integers are exact up to 2^53 as
 * numbers; larger 64-bit integers arrive as BigInt, and a BigInt that fits
 * 64 bits may be sent (a larger one is invalid_value). A number that is an
 * integer of at most 2^53 is sent as an integer, any other number as a
 * 64-bit float (so 2.0 arrives as 2). As with JSON.stringify, undefined
 * and functions inside objects are left out and objects with toJSON are
 * sent as what it returns: a Date travels as its ISO 8601 string and
 * arrives as that string (new Date(s) makes it a Date again). NaN and
 * infinities are refused (invalid_value).
 */
export type Value =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | Value[]
  | { [key: string]: Value };

/**
 * Sendable<T> is T when a value of type T can be published, and names the
 * part that cannot otherwise: publish, write and subscribe take interfaces
 * and type aliases of objects (which Value's index signature would
 * refuse, TS2345), checked member by member. Allowed: what Value allows,
 * any typed array or ArrayBuffer, objects with toJSON (Date), and
 * undefined or optional members inside objects (left out when sent).
 */
export type Sendable<T> = T extends null | boolean | number | bigint | string
  ? T
  : T extends ArrayBufferView | ArrayBuffer | { toJSON(): unknown }
    ? T
    : T extends (...args: never[]) => unknown
      ? never
      : T extends readonly unknown[]
        ? { [K in keyof T]: Sendable<T[K]> }
        : T extends object
          ? { [K in keyof T]: Member<T[K]> }
          : never;

/** A member of an object: Sendable, or undefined (left out). */
type Member<T> = T extends undefined ? undefined : Sendable<T>;

/** A position in a channel, "EPOCH:OFFSET". */
export type Position = string;

/** The states of a connection, in the order a client goes through them. */
export type State = "connecting" | "connected" | "disconnected" | "reconnecting" | "closed";

export declare const States: readonly State[];

/** Where to find the WebAssembly files; by default beside sluice.js, in dist/. */
export interface LoadOptions {
  /**
   * sluice.wasm's URL: http(s) (fetched), or file: (read from disk, in
   * Node.js; the default there is the package's own file).
   */
  wasmURL?: string;
  wasmExecURL?: string;
  /**
   * The WebSocket class, for a runtime that has none: Node.js before 22
   * (`import { WebSocket } from "ws"`). Where the runtime has one
   * (browsers, workers, Node.js 22, Deno, Bun), it is used and this is
   * ignored; otherwise it is installed as globalThis.WebSocket, which the
   * client looks up when sluice.wasm starts. Without either, load and
   * connect reject with invalid_options.
   */
  WebSocket?: new (url: string, protocols?: string | string[]) => unknown;
}

export interface ConnectOptions extends LoadOptions {
  /** The app to connect to. Required. */
  appkey: string;
  /** Authenticate as this role with its secret (RTM role_secret). */
  role?: string;
  secret?: string;
  /**
   * Or authenticate with a JWT signed with the app's key (Sluice's extension):
   * the token, or a function returning one (or a Promise of one), which the
   * client calls at each connect and again a quarter of the token's life
   * before its exp (at most a minute before), so that the edge never ends a
   * subscription for an expired token.
   */
  token?: string | (() => string | Promise<string>);
  /** Bounds of the delay between reconnection attempts, in ms; defaults 100 and 10000. */
  minBackoff?: number;
  maxBackoff?: number;
  /** Bound of one connection attempt (handshake and authentication), in ms; default 15000. */
  dialTimeout?: number;
  /** Bound of each call, including a wait for the connection while reconnecting, in ms; default 30000. */
  timeout?: number;
  /** Bytes of messages the client buffers for slow handlers; default 8 MiB. */
  deliveryBufferBytes?: number;
  /** What the client logs to the console; default "warn". */
  logLevel?: "debug" | "info" | "warn" | "error" | "off";
  /**
   * Close the connection when the page goes into the browser's back/forward
   * cache (pagehide with persisted), so that its user leaves the channels'
   * presence instead of staying until the tab closes, and reconnect when it
   * comes back (pageshow with persisted), resubscribing every subscription
   * from its position: no message is lost or repeated. State goes
   * "disconnected" meanwhile; calls wait for the return. Default true.
   */
  suspendOnPageHide?: boolean;
  /**
   * Keep the position of every live subscription in sessionStorage
   * ("session": this tab, until it closes) or localStorage ("local": the
   * origin, until cleared), saved after each batch the handler took, so
   * that a page that loads again (a reload, a navigation back) and
   * subscribes to the same channel (same id) starts where the one before
   * stopped: it misses nothing the edge still holds and gets nothing
   * twice. The saved position takes the place of history; an explicit
   * position comes first; a prefix subscription is not resumed. When the
   * edge no longer holds the position, the subscription starts as asked
   * and a "gap" event says so. unsubscribe() and an error forget the
   * position. With "local", two tabs of one page on one channel save over
   * each other: use it for one tab, or give each a resumeKey. Not in
   * workers, which have neither storage (a warning; no resume).
   */
  resume?: "session" | "local";
  /**
   * Run the client in a SharedWorker, so that the tabs of this origin that
   * connect to the same URL with the same options share one WebSocket, one
   * sluice.wasm and one edge subscription per channel and options (a tab
   * subscribing with a position or history, or resuming, gets one of its
   * own, from there). The API is the same; where SharedWorker is missing,
   * or refused (sluice.js from another origin than the page's), the tab
   * connects on its own. A tab that closes leaves its subscriptions; the
   * last one to close closes the connection. Default false.
   */
  shared?: boolean;
  /**
   * What keeps one page's saved positions apart from another's, beside the
   * edge URL, appkey and subscription id; default location.pathname. Set it
   * for a single-page application whose path changes (one key for all its
   * paths), or to tell apart two clients of one page.
   */
  resumeKey?: string;
  /** Listeners registered before connecting, so the first states are heard too. */
  onState?: (state: State, transport: Transport) => void;
  onError?: (error: SluiceError) => void;
  onGap?: (gap: Gap) => void;
}

export interface PublishOptions {
  /**
   * Keep the message from this client's own subscriptions to the channel:
   * everyone else subscribed gets it (Sluice's exclude_self). It is stored
   * as any other: read, and subscriptions after a reconnect, return it.
   */
  excludeSelf?: boolean;
}

export interface SubscribeOptions {
  /** The subscription id; default the channel name. Several subscriptions to one channel need distinct ids. */
  id?: string;
  /** Start at this position, inclusive (where a previous subscription stopped: Subscription.position). */
  position?: Position;
  /** Start with the last count messages and/or those younger than age seconds. */
  history?: { count?: number; age?: number };
  /** Skip messages that expired before they were read (an "info" and a "gap" event) instead of ending with out_of_sync. */
  fastForward?: boolean;
  /**
   * End the subscription with expired_position (an "error" event) when, after
   * a reconnect, the edge no longer has the position to resume from. By
   * default the client carries on from the oldest message the edge has and
   * emits a "gap" event instead.
   */
  strict?: boolean;
  /** Replace a live subscription with the same id. */
  force?: boolean;
  /** A stream SQL view, "SELECT ... FROM channel WHERE ..."; needs an id. */
  filter?: string;
  /** The aggregation period of a filter, in seconds. */
  period?: number;
  /** Skip a message equal to the one delivered before it (RTM's only: "value_changes"). */
  onlyChanges?: boolean;
  /**
   * Every channel whose name starts with the channel given (RTM's prefix);
   * MessageInfo.channel names each message's. Takes no position or filter;
   * after a reconnect it goes on with new messages (positions are per channel).
   */
  prefix?: boolean;
  /**
   * Follow who is in the channel (Sluice's presence extension; the role
   * needs the presence permission): "members" once they are known, then
   * "join" and "leave" events, and Subscription.presence().
   */
  presence?: boolean;
  /**
   * Receive each message after the first as a fossil delta against the one
   * before (Sluice's delta extension), applied before the handler: the
   * handler gets the same values, and a feed of large messages that differ in
   * a few fields takes a few dozen bytes a message. Not with filter,
   * onlyChanges or prefix.
   */
  delta?: boolean;
}

/** A user present in a channel: one per user id, however many connections it has there. */
export interface PresenceMember {
  /** The user id: the sub claim of the user's token (or what the app's connect hook said). */
  userId: string;
  /** What the user's token or the app's connect hook says of the user; null for nothing. */
  info: Value;
  /** The user's connections in the channel; 0 where the edge did not say (join and leave events). */
  connections: number;
}

/** A channel's members and counts: members, and connections (anonymous ones included). */
export interface Presence {
  members: PresenceMember[];
  users: number;
  connections: number;
}

/** A page of a channel's members from Client.presence; next, when not null, is the after of the next page. */
export interface PresencePage extends Presence {
  next: string | null;
}

/** What a handler learns about a message besides its value. */
export interface MessageInfo {
  subscriptionId: string;
  /** The position after the batch of messages this one came in. */
  position: Position;
  /** Whether this is the last message of its batch: position is then exactly where to resume after it. */
  endOfBatch: boolean;
  /** The message's channel, for a prefix subscription (position is then that channel's). */
  channel?: string;
}

/** A fast_forward notice: the edge skipped messages this subscription was too slow to read. */
export interface SubscriptionInfo {
  info: string;
  reason: string;
  position: Position;
  subscriptionId: string;
  missedMessageCount: number | bigint;
}

/** The codes of the edge's refusals (RTM v2 and Sluice's extensions). */
export type EdgeErrorCode =
  | "invalid_appkey"
  | "authorization_denied"
  | "authentication_failed"
  | "auth_method_not_allowed"
  | "invalid_format"
  | "invalid_operation"
  | "invalid_service"
  | "already_subscribed"
  | "not_subscribed"
  | "expired_position"
  | "out_of_sync"
  | "invalid_filter"
  | "subscription_quota_exceeded"
  | "channel_quota_exceeded"
  | "message_too_large"
  | "too_many_requests"
  | "too_many_connections"
  | "unavailable";

/**
 * A gap: the subscription carries on, but messages between requested and
 * resumed may be missing. It comes before the first message after the gap.
 * The usual cause is a reconnect whose position the edge no longer had (it
 * restarted without persistence, the client moved to another edge, or the
 * connection stayed down past the channel's retention); also a fast_forward
 * of a subscription that fell behind.
 */
export interface Gap {
  subscriptionId: string;
  channel: string;
  /** Where the subscription would have continued (after the last message handed over, or its start position). */
  requested: Position;
  /** Where it carries on: the oldest message the edge holds. */
  resumed: Position;
  /** How many messages the edge skipped when it knows; 0 when it cannot (after a reconnect). */
  missedMessageCount: number | bigint;
  /** The edge's explanation, for people. */
  reason: string;
}

/**
 * The client's own codes:
 * - network: the WebSocket could not be opened and the page may not learn
 *   why: the edge is unreachable (DNS, TCP, TLS), or refused the page's
 *   origin (allowed_origins); the browser console says more;
 * - refused: the edge refused the WebSocket with an HTTP status but no
 *   RTM code (a proxy in front of it, say);
 * - disconnected: the connection dropped before the reply; the call may
 *   or may not have been carried out;
 * - closed: the client was closed; timeout: the call's timeout passed;
 * - invalid_options, invalid_url, invalid_value: a bad argument;
 * - handler_error: a subscription's handler threw;
 * - load_failed: sluice.wasm or wasm_exec.js could not be loaded;
 * - internal_error, unknown_handle: a bug in the client (please report);
 * - error: anything else, with the details in message.
 */
export type ClientErrorCode =
  | "network"
  | "refused"
  | "disconnected"
  | "closed"
  | "timeout"
  | "invalid_options"
  | "invalid_url"
  | "invalid_value"
  | "handler_error"
  | "load_failed"
  | "internal_error"
  | "unknown_handle"
  | "error";

/** What SluiceError.code may be; an edge newer than this client may send others. */
export type ErrorCode = EdgeErrorCode | ClientErrorCode | (string & {});

/**
 * The error of every failed call and "error" event. Branch on code: the
 * edge's RTM code, or the client's own (ClientErrorCode). The edge's codes
 * reach pages of other origins too, as long as the edge allows their
 * origin (allowed_origins).
 */
export declare class SluiceError extends Error {
  readonly name: "SluiceError";
  readonly code: ErrorCode;
  readonly reason: string;
  readonly position: Position | null;
  readonly subscriptionId: string | null;
}

declare class Emitter<Events extends Record<string, (...args: any[]) => void>> {
  /** on registers a listener and returns a function that removes it. */
  on<E extends keyof Events>(event: E, listener: Events[E]): () => void;
  off<E extends keyof Events>(event: E, listener: Events[E]): void;
}

/** How a connection is carried. */
export type Transport = "websocket" | "http-stream";

export type ClientEvents = {
  /** A new connection state, and the transport the connection uses. */
  state: (state: State, transport: Transport) => void;
  /** A subscription ended by the edge (out_of_sync; expired_position when resuming with strict), refused, or whose handler threw. */
  error: (error: SluiceError) => void;
  /** A subscription of this client carries on past messages it may have missed. */
  gap: (gap: Gap) => void;
};

/** A connection to an edge, kept up (reconnect, re-authenticate, resume) until close(). */
export declare class Client extends Emitter<ClientEvents> {
  readonly state: State;
  /**
   * How the connection is carried: "websocket", or "http-stream" (Server-Sent
   * Events and POSTs) where a WebSocket could not open, which the client falls
   * back to by itself.
   */
  readonly transport: Transport;
  /** Publish a message; resolves with its position once the edge stored it. */
  publish<T>(channel: string, message: T & Sendable<T>, options?: PublishOptions): Promise<Position>;
  /** Store a message like publish (RTM's key-value name). */
  write<T>(channel: string, message: T & Sendable<T>, options?: PublishOptions): Promise<Position>;
  /** Publish null, RTM's way of deleting a key. */
  delete(channel: string): Promise<Position>;
  /**
   * The newest message of a channel (null if none), or the one at
   * options.position. T is what the application knows the channel holds;
   * nothing checks it (a Date sent arrives as a string).
   */
  read<T = Value>(channel: string, options?: { position?: Position }): Promise<{ message: T | null; position: Position | null }>;
  /**
   * Subscribe; returns at once. handler gets every message in order, once,
   * across reconnects as long as the edge still holds them. When it no longer
   * does, the subscription carries on from the oldest message it has and a
   * "gap" event says so (with strict, it ends with an "error" event). T is
   * what the application knows the channel carries; nothing checks it.
   */
  subscribe<T = Value>(channel: string, options: SubscribeOptions, handler: (message: T, info: MessageInfo) => void): Subscription;
  subscribe<T = Value>(channel: string, handler: (message: T, info: MessageInfo) => void): Subscription;
  /**
   * A page of a channel's members, in user id order, from the edge: up to
   * limit (default 100, at most 1000) whose user ids sort after after.
   */
  presence(channel: string, options?: { after?: string; limit?: number }): Promise<PresencePage>;
  /** Close the connection and end every subscription. Idempotent. */
  close(): Promise<void>;
}

export type SubscriptionEvents = {
  /** The subscription ended because of the edge, was refused, or its handler threw. */
  error: (error: SluiceError) => void;
  /** The edge fast-forwarded the subscription. */
  info: (info: SubscriptionInfo) => void;
  /** The subscription carries on past messages it may have missed (also emitted on the client). */
  gap: (gap: Gap) => void;
  /** With presence: the channel's members, once first known. */
  members: (members: PresenceMember[]) => void;
  /** With presence: a user joined the channel (its first connection there). */
  join: (member: PresenceMember) => void;
  /** With presence: a user left the channel (its last connection there). */
  leave: (member: PresenceMember) => void;
  /** With presence: guests (connections without a user id) came or went; the counts now. */
  count: (counts: { users: number; connections: number }) => void;
};

export declare class Subscription extends Emitter<SubscriptionEvents> {
  readonly id: string;
  readonly channel: string;
  /** Resolves once the edge accepted the subscription; rejects (and an "error" event fires) if it refused. */
  readonly ready: Promise<Subscription>;
  readonly state: "pending" | "live" | "ended";
  /** Why the edge ended or refused the subscription, else null. */
  readonly error: SluiceError | null;
  /** Where it would continue: after the last batch handed to the handler. Subscribing there continues without gap or duplicate. */
  readonly position: Position | null;
  /** With presence: the channel's members as this subscription knows them, in user id order. */
  presence(): Presence;
  /** End the subscription here and on the edge. */
  unsubscribe(): Promise<void>;
}

export declare class Sluice {
  /** Load the WebAssembly client (once per page), connect and authenticate. */
  static connect(url: string | URL | undefined, options: ConnectOptions): Promise<Client>;
  static load(options?: LoadOptions): Promise<unknown>;
}

/** Fetch and start sluice.wasm ahead of connect, or from elsewhere. */
export declare function load(options?: LoadOptions): Promise<unknown>;

export default Sluice;
