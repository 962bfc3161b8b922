/** Credits that replace the defaults: by method (`eth_subscribe`, `eth_unsubscribe`) and by event kind (`newHeads`...). */
export interface SubscriptionCredits {
  /** Credits per call of a subscription method, by method name. */
  readonly methods?: Readonly<Record<string, number>>;
  /** Credits per delivered event, by kind. */
  readonly events?: Readonly<Record<string, number>>;
}

/** Options of the WebSocket transport's subscriptions. */
export interface SubscriptionOptions {
  /** Subscriptions one connection may hold. Default 100. */
  readonly maxPerConnection?: number;
  /** Subscriptions one key may hold over all its connections. Default 1,000. */
  readonly maxPerKey?: number;
  /**
   * Bytes of notifications that may wait for a slow reader (in the gateway, beyond what the socket
   * already holds); when more would wait, the connection is closed with 4408. Default 1 MiB.
   */
  readonly maxQueuedBytes?: number;
  /** How long a connection closed for being slow (or over quota) has to read the close frame before it is cut. Default 5 s. */
  readonly closeTimeoutMs?: number;
  /**
   * Subscribes refused in a row (caps, no node able to serve) after which the connection is closed with
   * 4429, so that a client resubscribing at once after each refusal waits for its reconnection. Default 100.
   */
  readonly maxRefusedInRow?: number;
  /** Credits replacing the family's defaults, for every plan. */
  readonly credits?: SubscriptionCredits;
  /** Credits replacing those, per plan name. */
  readonly plans?: Readonly<Record<string, SubscriptionCredits>>;
  /** Ping interval of upstream WebSockets; an upstream that has not answered the previous ping is dropped and its streams move. Default 5 s. */
  readonly upstreamPingMs?: number;
  /** Timeout of a call on an upstream WebSocket (subscribing, history reads). Default 10 s. */
  readonly upstreamTimeoutMs?: number;
  /** How often each shared stream checks its node is still healthy and at the head (else it moves). Default 1 s. */
  readonly healthCheckMs?: number;
}

/** Subscription options with defaults applied. */
export interface SubscriptionSettings {
  /** See {@link SubscriptionOptions.maxPerConnection}. */
  readonly maxPerConnection: number;
  /** See {@link SubscriptionOptions.maxPerKey}. */
  readonly maxPerKey: number;
  /** See {@link SubscriptionOptions.maxQueuedBytes}. */
  readonly maxQueuedBytes: number;
  /** See {@link SubscriptionOptions.closeTimeoutMs}. */
  readonly closeTimeoutMs: number;
  /** See {@link SubscriptionOptions.maxRefusedInRow}. */
  readonly maxRefusedInRow: number;
  /** See {@link SubscriptionOptions.credits}. */
  readonly credits: SubscriptionCredits;
  /** See {@link SubscriptionOptions.plans}. */
  readonly plans: Readonly<Record<string, SubscriptionCredits>>;
  /** See {@link SubscriptionOptions.upstreamPingMs}. */
  readonly upstreamPingMs: number;
  /** See {@link SubscriptionOptions.upstreamTimeoutMs}. */
  readonly upstreamTimeoutMs: number;
  /** See {@link SubscriptionOptions.healthCheckMs}. */
  readonly healthCheckMs: number;
}

/** Applies the defaults. */
export function resolveSubscriptionSettings(options: SubscriptionOptions = {}): SubscriptionSettings {
  return {
    maxPerConnection: options.maxPerConnection ?? 100,
    maxPerKey: options.maxPerKey ?? 1_000,
    maxQueuedBytes: options.maxQueuedBytes ?? 1024 * 1024,
    closeTimeoutMs: options.closeTimeoutMs ?? 5_000,
    maxRefusedInRow: options.maxRefusedInRow ?? 100,
    credits: options.credits ?? {},
    plans: options.plans ?? {},
    upstreamPingMs: options.upstreamPingMs ?? 5_000,
    upstreamTimeoutMs: options.upstreamTimeoutMs ?? 10_000,
    healthCheckMs: options.healthCheckMs ?? 1_000,
  };
}

/** Credits of a subscription method for a plan: the plan's, the transport's, else the method's own. */
export function methodCredits(settings: SubscriptionSettings, plan: string, method: string, fallback: number): number {
  return settings.plans[plan]?.methods?.[method] ?? settings.credits.methods?.[method] ?? fallback;
}

/** Credits of one event of `kind` for a plan: the plan's, the transport's, else the family's default. */
export function eventCredits(settings: SubscriptionSettings, plan: string, kind: string, fallback: number): number {
  return settings.plans[plan]?.events?.[kind] ?? settings.credits.events?.[kind] ?? fallback;
}
