import type { MaybePromise } from '../util/maybe-promise.js';

/** Asks the node serving a stream a plain call (history to fill a gap): resolves with the `result`. */
export type StreamAsk = (method: string, params: readonly unknown[]) => Promise<unknown>;

/** What an `eth_subscribe`-style call asks for, read from its validated params. */
export interface StreamRequest {
  /** The kind of events (`newHeads`, `logs`...): events are priced per kind. */
  readonly kind: string;
  /**
   * Identifies the stream: two calls with the same key get the same events, so they share one upstream
   * subscription. Equal filters written differently (address case, order of an address list) give one key.
   */
  readonly key: string;
  /** The params to subscribe with upstream. */
  readonly params: readonly unknown[];
}

/**
 * Keeps one shared stream continuous across the nodes that serve it: told of each event as the node
 * sends it, it answers what to deliver, in order. After the stream moves to another node it fills the
 * gap from that node's history and drops what was already delivered.
 */
export interface StreamContinuity {
  /** An event from the serving node: the events to deliver now, in order (none for a duplicate). */
  next(result: unknown, ask: StreamAsk): MaybePromise<readonly unknown[]>;
  /** The stream now runs on another node: events it missed meanwhile, in order (read from `ask`). */
  resumed(ask: StreamAsk): MaybePromise<readonly unknown[]>;
  /** The stream was opened on its first node: remember where it starts (a log stream, the head). */
  opened?(ask: StreamAsk): MaybePromise<void>;
}

/**
 * How a network family offers subscriptions (`eth_subscribe`): its method names, how to read a
 * request, what each kind of event costs, and how to keep a stream continuous when its node changes.
 * Transports that hold connections (WebSocket) serve them; the family only describes them.
 */
export interface SubscriptionSupport {
  /** The method that opens a subscription (`eth_subscribe`); the family defines it in its methods. */
  readonly subscribe: string;
  /** The method that closes one (`eth_unsubscribe`); the family defines it in its methods. */
  readonly unsubscribe: string;
  /** The method name of notifications (`eth_subscription`). */
  readonly notification: string;
  /** Reads the validated params of a subscribe call. */
  request(params: unknown): StreamRequest;
  /** Credits charged per delivered event, by kind (a plugin's settings may override them per plan). */
  readonly eventCredits: Readonly<Record<string, number>>;
  /** A continuity keeper for one shared stream. */
  continuity(request: StreamRequest): StreamContinuity;
}
