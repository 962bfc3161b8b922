import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Errors, GatewayError, type RequestContext } from '../../../core/plugin-api.js';
import type { StreamRequest, SubscriptionIdFormat, SubscriptionMethod, SubscriptionSupport } from '../../../core/family-api.js';
import { type Upstream, type UpstreamSelector } from '../../../core/upstream-api.js';
import { StreamHub } from './stream-hub.js';
import type { UpstreamSocketPool } from '../upstream/socket-pool.js';
import type { SubscriptionSettings } from './settings.js';

/**
 * Every shared stream of one gateway: a stream per network, filter and partner eligibility (a client
 * whose plan may not reach partners never shares a stream a partner serves), on the transport's upstream
 * sockets (shared with clients' calls), and the per-key subscription counts.
 */
export class SubscriptionService {
  /** The transport's subscription settings. */
  readonly settings: SubscriptionSettings;
  readonly #hubs = new Map<string, { hub: StreamHub; ready: Promise<void> }>();
  readonly #pool: UpstreamSocketPool;
  readonly #perKey = new Map<string, number>();
  #selector: UpstreamSelector | undefined;
  #logger: Logger | undefined;
  /** The last integer id given (ids are unique on the gateway, as a node's are). */
  #lastId = 0;

  constructor(settings: SubscriptionSettings, pool: UpstreamSocketPool) {
    this.settings = settings;
    this.#pool = pool;
  }

  /** Binds the gateway's selector and logger (done when the pipeline is built). */
  bind(selector: UpstreamSelector, logger: Logger): void {
    this.#selector = selector;
    this.#logger = logger;
  }

  /** Shared streams open. */
  get streams(): number {
    return this.#hubs.size;
  }

  /** Upstream subscriptions open, over every upstream socket. */
  get upstreamSubscriptions(): number {
    let n = 0;
    for (const sockets of this.#pool.sockets().values()) for (const socket of sockets) n += socket.subscriptions;
    return n;
  }

  /** The hubs, for metrics and tests. */
  hubs(): StreamHub[] {
    return [...this.#hubs.values()].map((h) => h.hub);
  }

  /** Subscriptions `keyId` holds over all its connections. */
  held(keyId: string): number {
    return this.#perKey.get(keyId) ?? 0;
  }

  /** Counts a new subscription of `keyId`, refusing it over the per-key cap. */
  reserve(keyId: string): void {
    const held = this.#perKey.get(keyId) ?? 0;
    if (held >= this.settings.maxPerKey) {
      throw new GatewayError(Errors.LIMIT_EXCEEDED, { message: `subscription limit reached: this key holds ${held} subscriptions (limit ${this.settings.maxPerKey})` });
    }
    this.#perKey.set(keyId, held + 1);
  }

  /** A new client subscription id in `format`: 128 random bits in hex, or the next integer. */
  newId(format: SubscriptionIdFormat): string | number {
    return format === 'integer' ? ++this.#lastId : `0x${randomBytes(16).toString('hex')}`;
  }

  /** Gives back a subscription of `keyId`. */
  release(keyId: string): void {
    const held = (this.#perKey.get(keyId) ?? 1) - 1;
    if (held <= 0) this.#perKey.delete(keyId);
    else this.#perKey.set(keyId, held);
  }

  /**
   * The hub of a stream, opened on first use: resolves once the upstream subscription is open, rejects
   * when no upstream can take it. `ctx` is the subscribing call (routing follows its method and plan).
   */
  async join(ctx: RequestContext, support: SubscriptionSupport, method: SubscriptionMethod, request: StreamRequest, eligible: boolean): Promise<StreamHub> {
    // No upstream with a wsUrl: no subscription can ever open, so say so rather than "retry later" (-33503).
    if (!ctx.network.upstreams.some((u) => u.settings.wsUrl !== undefined)) {
      throw new GatewayError(Errors.SUBSCRIPTIONS_NOT_SUPPORTED, {
        message: `network "${ctx.network.name}" has no upstream with a WebSocket URL (wsUrl), which subscriptions need: poll with plain calls instead`,
      });
    }
    const key = `${ctx.network.name}|${eligible ? 'any' : 'primary'}|${method.subscribe}|${request.key}`;
    let entry = this.#hubs.get(key);
    if (entry === undefined) {
      const selector = this.#selector!;
      const route = ctx;
      const hub: StreamHub = new StreamHub(key, {
        support,
        method,
        request,
        candidates: () => selector.select(route),
        primaries: () => route.network.upstreams.filter((u) => u.settings.role === 'primary'),
        healthy: (upstream) => selector.status?.().find((s) => s.network === upstream.settings.network && s.name === upstream.name)?.healthy ?? true,
        socketFor: (upstream) => this.#pool.forSubscription(upstream),
        logger: this.#logger!,
        healthCheckMs: this.settings.healthCheckMs,
        askTimeoutMs: this.settings.upstreamTimeoutMs,
        closed: () => {
          if (this.#hubs.get(key)?.hub === hub) this.#hubs.delete(key);
        },
      });
      const ready = hub.start();
      entry = { hub, ready };
      this.#hubs.set(key, entry);
      ready.catch(() => { if (this.#hubs.get(key)?.hub === hub) this.#hubs.delete(key); });
    }
    try {
      await entry.ready;
    } catch (error) {
      throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: `no upstream of network "${ctx.network.name}" could open the subscription`, cause: error });
    }
    return entry.hub;
  }

  /** Closes every stream (gateway shutdown; the transport closes the sockets). */
  close(): void {
    for (const { hub } of [...this.#hubs.values()]) hub.close();
  }
}
