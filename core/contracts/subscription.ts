import type { MaybePromise } from '../util/maybe-promise.js';

/** Asks the node serving a stream a plain call (history to fill a gap): resolves with the `result`. */
export type StreamAsk = (method: string, params: readonly unknown[]) => Promise<unknown>;

/** What a subscribe call asks for, read from its validated params. */
export interface StreamRequest {
  /**
   * The kind of events (`newHeads`, `logs`, `slotNotification`...): events are priced per kind. Usage
   * records an event as `<notification>:<kind>` (`eth_subscription:newHeads`), or as the notification
   * method alone when the kind is that name (`slotNotification`).
   */
  readonly kind: string;
  /**
   * Identifies the stream within its subscribe method: two calls with the same key get the same events,
   * so they share one upstream subscription. Equal filters written differently (address case, order of
   * an address list, a default written out) give one key.
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
  /**
   * Whether `event` (one this keeper answered to deliver) is the stream's last: the node ends such a
   * subscription by itself after sending it (Solana's `signatureSubscribe`), so the gateway ends the
   * clients' subscriptions once it is delivered, and sends no unsubscribe upstream.
   */
  ends?(event: unknown): boolean;
}

/** One subscribe method of a family, the method that closes what it opens, and its notifications' method. */
export interface SubscriptionMethod {
  /** The method that opens a subscription (`eth_subscribe`, `slotSubscribe`); the family defines it in its methods. */
  readonly subscribe: string;
  /** The method that closes one (`eth_unsubscribe`, `slotUnsubscribe`); the family defines it in its methods. */
  readonly unsubscribe: string;
  /** The method name of its notifications (`eth_subscription`, `slotNotification`). */
  readonly notification: string;
}

/**
 * How the subscription ids clients get are written: `hex` is `0x` and 32 hex digits, a JSON string
 * (geth's); `integer` is a JSON number, unique on the gateway (agave's).
 */
export type SubscriptionIdFormat = 'hex' | 'integer';

/**
 * How a network family offers subscriptions: its subscribe methods, the shape of ids and notifications,
 * how to read a request, what each kind of event costs, and how to keep a stream continuous when its node
 * changes. Transports that hold connections (WebSocket) serve them; the family only describes them.
 *
 * A notification is written `{"jsonrpc":"2.0","method":<notification>,"params":{"subscription":<id>,"result":<event>}}`,
 * the one shape both geth and agave use; an unsubscribe takes `[id]` as the id was given.
 */
export interface SubscriptionSupport {
  /** The subscribe methods (one for an EVM chain, `eth_subscribe`; one per stream kind on Solana). */
  readonly methods: readonly SubscriptionMethod[];
  /** How ids are written. Default `hex`. */
  readonly ids?: SubscriptionIdFormat;
  /**
   * What an unsubscribe of an id the connection does not hold answers: `false` (geth), or `error`, an
   * invalid-params error (agave's `Invalid subscription id.`). Default `false`.
   */
  readonly unknownId?: 'false' | 'error';
  /**
   * Whether the family's nodes answer plain calls on their WebSocket, as geth does. Default true. False
   * for nodes whose WebSocket serves subscriptions only (agave): a stream's history reads then go to the
   * node serving it over HTTP, and clients' calls never travel over upstream WebSockets.
   */
  readonly socketCalls?: boolean;
  /** Reads the validated params of a call of `method`'s subscribe method. */
  request(params: unknown, method: SubscriptionMethod): StreamRequest;
  /** Credits charged per delivered event, by kind (a plugin's settings may override them per plan). */
  readonly eventCredits: Readonly<Record<string, number>>;
  /** A continuity keeper for one shared stream of `method`. */
  continuity(request: StreamRequest, method: SubscriptionMethod): StreamContinuity;
}
