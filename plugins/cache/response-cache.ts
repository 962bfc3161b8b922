import type { Logger } from 'pino';
import { Errors, GatewayError, isPromise, step, ContextKey, type Network, type RequestContext, type Stage, methodOf, planOf, replyOf } from '../../core/plugin-api.js';
import { cacheKey } from './cache-key.js';
import { answerMember, envelope, type AnswerMember } from './envelope.js';
import { HeadTracker, type HeadEvents } from './head-tracker.js';
import { InFlightCalls } from './in-flight-calls.js';
import type { CacheScope, ChainHead, FamilyCachePolicies, MethodCachePolicy } from '../../core/family-api.js';
import type { ResolvedCacheSettings } from './settings.js';
import type { CacheStore } from './store.js';

/** The name of the header that tells whether an answer came from the cache. */
export const CACHE_HEADER = 'x-tollgate-cache';

const HIT_HEADERS: Readonly<Record<string, string>> = Object.freeze({ [CACHE_HEADER]: 'hit' });
const MISS_HEADERS: Readonly<Record<string, string>> = Object.freeze({ [CACHE_HEADER]: 'miss' });
const NULL = Buffer.from('null');
const STORE_LOG_INTERVAL_MS = 10_000;

/** What the cache knows of one network: its methods' policies and its head. */
interface NetworkCache {
  readonly methods: ReadonlyMap<string, MethodCachePolicy>;
  readonly tracker: HeadTracker | undefined;
  readonly unfinalizedTag: string;
  /** Bumped on every reorg, so an answer fetched before one is not stored after it. */
  generation: number;
}

/** A cacheable call on its way upstream. */
interface Lead {
  readonly key: string;
  readonly scope: CacheScope;
  readonly policy: MethodCachePolicy;
  readonly net: NetworkCache;
  readonly generation: number;
  readonly settle: (answer: AnswerMember | undefined) => void;
}

const LEAD = new ContextKey<Lead>('cache.lead');

/** Counters of the cache's work since start. */
export interface CacheCounters {
  /** Calls answered from the store or from an identical call in flight. */
  hits: number;
  /** Cacheable calls that went upstream. */
  misses: number;
  /** Calls answered by an identical call in flight (part of `hits`). */
  shared: number;
  /** Store operations that failed or timed out (each such lookup counted as a miss). */
  storeFailures: number;
  /** Reorgs seen. */
  reorgs: number;
}

/**
 * The response cache: a `cache` stage right after `validate` that answers a cacheable call from the
 * store (or from an identical call in flight), and a `cacheStore` stage after `checkResult` that keeps
 * the answers the method's policy allows. See docs/caching.md for the rules.
 */
export class ResponseCache implements HeadEvents {
  /** Counters since start. */
  readonly counters: CacheCounters = { hits: 0, misses: 0, shared: 0, storeFailures: 0, reorgs: 0 };
  readonly #settings: ResolvedCacheSettings;
  readonly #store: CacheStore;
  readonly #families: ReadonlyMap<string, FamilyCachePolicies>;
  readonly #logger: Logger;
  readonly #networks = new Map<string, NetworkCache | undefined>();
  #directory: (() => { get(name: string): Network | undefined }) | undefined;
  #stopped = false;
  readonly #inFlight = new InFlightCalls();
  #lastStoreLog = 0;
  #waiting = 0;

  constructor(settings: ResolvedCacheSettings, store: CacheStore, families: readonly FamilyCachePolicies[], logger: Logger) {
    this.#settings = settings;
    this.#store = store;
    this.#families = new Map(families.map((f) => [f.family, f]));
    this.#logger = logger;
  }

  /** The families that declared cache policies: the calls of other families never reach the cache. */
  get families(): readonly string[] {
    return [...this.#families.keys()];
  }

  /** Calls waiting now for an identical call in flight. */
  get waiting(): number {
    return this.#waiting;
  }

  /** The store in use. */
  get store(): CacheStore {
    return this.#store;
  }

  /**
   * Opens the store. Networks are taken up on their first call (or `refreshHead`): the gateway
   * builds them after its plugins start.
   */
  async start(networks: () => { get(name: string): Network | undefined }): Promise<void> {
    this.#directory = networks;
    this.#stopped = false;
    await this.#store.open?.();
  }

  /** What the cache knows of `network`, made on first use; undefined when no family of it declared policies. */
  #networkCache(network: Network): NetworkCache | undefined {
    const known = this.#networks.get(network.name);
    if (known !== undefined || this.#networks.has(network.name)) return known;
    if (this.#settings.networks !== undefined && !this.#settings.networks.includes(network.name)) {
      this.#networks.set(network.name, undefined);
      return undefined;
    }
    const methods = new Map<string, MethodCachePolicy>();
    let headSource: FamilyCachePolicies | undefined;
    for (const family of network.families) {
      const declared = this.#families.get(family.name);
      if (declared === undefined) continue;
      for (const [name, policy] of Object.entries(declared.methods)) methods.set(name, policy);
      if (declared.readHead !== undefined) headSource ??= declared;
    }
    if (methods.size === 0 || this.#stopped) {
      this.#networks.set(network.name, undefined);
      return undefined;
    }
    const tracker = headSource === undefined ? undefined : new HeadTracker(network, { ...headSource, readHead: headSource.readHead! }, this, this.#logger);
    const net: NetworkCache = { methods, tracker, unfinalizedTag: `${network.name}:unfinalized`, generation: 0 };
    this.#networks.set(network.name, net);
    // Until the first read answers, head-bound answers are not cached.
    tracker?.start(this.#settings.headIntervalMs).catch(() => undefined);
    return net;
  }

  /** Stops following heads and closes the store. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const net of this.#networks.values()) net?.tracker?.stop();
    await this.#store.close?.();
  }

  /** The head of `network` as last read, or undefined when unknown or not tracked. */
  headOf(network: string): ChainHead | undefined {
    return this.#networks.get(network)?.tracker?.head;
  }

  /** Reads the head of `network` now (reporting any reorg first) rather than at the next interval. */
  async refreshHead(network: string): Promise<ChainHead | undefined> {
    const found = this.#directory?.().get(network);
    return found === undefined ? undefined : this.#networkCache(found)?.tracker?.refresh();
  }

  onReorg(network: string): void | Promise<void> {
    const net = this.#networks.get(network);
    if (net === undefined) return;
    net.generation++;
    this.counters.reorgs++;
    return this.#guard(() => this.#store.dropTag(net.unfinalizedTag), 'drop');
  }

  /** The `cache` stage: answers a cacheable call from the store or from an identical call in flight. */
  lookupStage(): Stage {
    return step((ctx) => this.#lookup(ctx));
  }

  /** The `cacheStore` stage: keeps the answer of a call that went upstream, as its policy allows. */
  keepStage(): Stage {
    return step((ctx) => this.#keep(ctx));
  }

  #lookup(ctx: RequestContext): void | Promise<void> {
    const net = this.#networkCache(ctx.network as Network);
    const policy = net?.methods.get(ctx.call.method);
    if (net === undefined || policy === undefined) return;
    const head = net.tracker?.head;
    let scope: CacheScope | undefined;
    try {
      scope = policy.scope(ctx.params, head);
    } catch {
      return;
    }
    if (scope === undefined || !this.#cacheable(scope, head, net)) return;
    const key = cacheKey(ctx.network.name, ctx.call.method, ctx.params, scope.scope === 'head' ? head!.number : undefined);
    const found = this.#get(key);
    if (isPromise(found)) return found.then((bytes) => this.#found(ctx, net, key, scope, policy, bytes));
    return this.#found(ctx, net, key, scope, policy, found);
  }

  #cacheable(scope: CacheScope, head: ChainHead | undefined, net: NetworkCache): boolean {
    switch (scope.scope) {
      case 'forever':
      case 'ttl':
        return true;
      case 'block':
        return head !== undefined && scope.block <= head.number;
      default:
        return head !== undefined && net.tracker !== undefined;
    }
  }

  #found(ctx: RequestContext, net: NetworkCache, key: string, scope: CacheScope, policy: MethodCachePolicy, bytes: Uint8Array | undefined): void | Promise<void> {
    if (bytes !== undefined) {
      this.#answer(ctx, 'result', bytes);
      return;
    }
    const shared = this.#inFlight.waitFor(key);
    if (shared === undefined) return this.#lead(ctx, net, key, scope, policy);
    // Held by a call outside this one's batch, or by a sibling in it: the batch's dispatch must not wait for it.
    const waited = this.#untilAnswered(shared, ctx);
    return (ctx.batch === undefined ? waited : ctx.batch.idle(ctx, waited)).then((answer) => {
      if (answer === undefined) return this.#miss(ctx);
      this.counters.shared++;
      this.#answer(ctx, answer.kind, answer.bytes);
    });
  }

  /** Waits for the call in flight, unless this call's client goes away first. */
  #untilAnswered(shared: Promise<AnswerMember | undefined>, ctx: RequestContext): Promise<AnswerMember | undefined> {
    const signal = ctx.cancelSignal;
    if (signal.aborted) return Promise.reject(new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the client went away' }));
    this.#waiting++;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiting--;
        reject(new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the client went away' }));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void shared.then((answer) => {
        if (signal.aborted) return;
        this.#waiting--;
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      });
    });
  }

  #lead(ctx: RequestContext, net: NetworkCache, key: string, scope: CacheScope, policy: MethodCachePolicy): void {
    const settle = this.#inFlight.lead(key);
    // A call that fails in the gateway settles with nothing, so the calls waiting on it go upstream themselves.
    ctx.compensations.push(() => settle(undefined));
    ctx.state.set(LEAD, { key, scope, policy, net, generation: net.generation, settle });
    this.#miss(ctx);
  }

  #miss(ctx: RequestContext): void {
    this.counters.misses++;
    ctx.cache = 'miss';
    if (this.#settings.header) ctx.replyHeaders = { ...ctx.replyHeaders, ...MISS_HEADERS };
  }

  #answer(ctx: RequestContext, kind: 'result' | 'error', bytes: Uint8Array): void {
    this.counters.hits++;
    ctx.cache = 'hit';
    ctx.reply = { status: 200, headers: {}, body: envelope(ctx.call.id, kind, bytes) };
    if (this.#settings.header) ctx.replyHeaders = { ...ctx.replyHeaders, ...HIT_HEADERS };
    const factor = this.#settings.planHitCreditFactor[planOf(ctx).name] ?? this.#settings.hitCreditFactor;
    if (factor !== 1) ctx.credits = Math.ceil(methodOf(ctx).credits * factor);
  }

  #keep(ctx: RequestContext): void | Promise<void> {
    const lead = ctx.state.get(LEAD);
    if (lead === undefined || ctx.servedBy === undefined) return;
    const body = replyOf(ctx).body;
    const member = answerMember(Buffer.isBuffer(body) ? body : Buffer.from(body as Uint8Array));
    lead.settle(member);
    if (member?.kind !== 'result' || member.bytes.equals(NULL) || lead.net.generation !== lead.generation) return;
    const kept = this.#lifetime(lead, member.bytes, ctx.params);
    if (kept === undefined) return;
    // Copied: the reply's buffer may be a slice of a larger one the store should not hold on to.
    const value = Buffer.from(member.bytes);
    // Awaited (within `lookupTimeoutMs`), so an answer the client has is in the store for the next call,
    // on any instance.
    return this.#guard(() => this.#store.set(lead.key, value, kept.ttlMs, kept.tag), 'write');
  }

  /** How long an answer is kept and under which tag, or undefined when it must not be. */
  #lifetime(lead: Lead, bytes: Buffer, params: unknown): { ttlMs: number; tag?: string } | undefined {
    const { policy, scope, net } = lead;
    let result: unknown;
    if (policy.keep !== undefined || scope.scope === 'answer') {
      try {
        result = JSON.parse(bytes.toString('utf8'));
      } catch {
        return undefined;
      }
      if (policy.keep !== undefined && !policy.keep(result, params)) return undefined;
    }
    const s = this.#settings;
    const head = net.tracker?.head;
    const atBlock = (block: number | undefined): { ttlMs: number; tag?: string } | undefined => {
      if (block === undefined || head === undefined || block > head.number) return undefined;
      return block <= head.finalized ? { ttlMs: s.finalTtlMs } : { ttlMs: s.unfinalizedTtlMs, tag: net.unfinalizedTag };
    };
    switch (scope.scope) {
      case 'forever':
        return { ttlMs: s.finalTtlMs };
      case 'ttl':
        return { ttlMs: scope.ttlMs };
      case 'block':
        return atBlock(scope.block);
      case 'answer':
        return atBlock(policy.blockOf?.(result));
      case 'unfinalized':
        return { ttlMs: s.unfinalizedTtlMs, tag: net.unfinalizedTag };
      case 'head':
        // Keyed by the head's height; tagged too, as a reorg may replace the head at the same height.
        return { ttlMs: s.headTtlMs, tag: net.unfinalizedTag };
    }
  }

  /** A store lookup that fails or is slower than `lookupTimeoutMs` is a miss. */
  #get(key: string): Uint8Array | undefined | Promise<Uint8Array | undefined> {
    let found: ReturnType<CacheStore['get']>;
    try {
      found = this.#store.get(key);
    } catch (error) {
      this.#storeFailed(error, 'read');
      return undefined;
    }
    if (!isPromise(found)) return found;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#storeFailed(new Error(`no answer in ${this.#settings.lookupTimeoutMs} ms`), 'read');
        resolve(undefined);
      }, this.#settings.lookupTimeoutMs);
      found.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          this.#storeFailed(error, 'read');
          resolve(undefined);
        },
      );
    });
  }

  /** Runs a store write or drop whose failure (or slowness beyond `lookupTimeoutMs`) must not reach the call. */
  #guard(operation: () => void | Promise<void>, what: string): void | Promise<void> {
    let done: void | Promise<void>;
    try {
      done = operation();
    } catch (error) {
      this.#storeFailed(error, what);
      return;
    }
    if (!isPromise(done)) return;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.#settings.lookupTimeoutMs);
      done.then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clearTimeout(timer);
          this.#storeFailed(error, what);
          resolve();
        },
      );
    });
  }

  #storeFailed(error: unknown, what: string): void {
    this.counters.storeFailures++;
    const now = Date.now();
    if (now - this.#lastStoreLog < STORE_LOG_INTERVAL_MS) return;
    this.#lastStoreLog = now;
    this.#logger.warn({ err: error, operation: what }, 'cache store failed; calls are served as misses');
  }
}
