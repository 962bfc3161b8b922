import type { RequestContext } from '../types.js';
import type { MaybePromise } from '../util/maybe-promise.js';
import { UtcDayCache } from '../metering/credit-ledger.js';

/**
 * Sees every call when it leaves the pipeline, served or failed (after compensation ran): metrics,
 * access logs and usage accounting plug in here. Observers must not throw; a failing observer is
 * logged and ignored.
 */
export interface CallObserver {
  /** Called once per call, with the finished context. */
  callFinished(ctx: RequestContext): void;
}

/** One entry of usage accounting. */
export interface UsageEvent {
  /** The key's id (never the key). */
  readonly keyId: string;
  /** The network's name. */
  readonly network: string;
  /** The method or command. */
  readonly method: string;
  /** When it happened (ms since epoch, gateway clock). */
  readonly at: number;
  /** Calls to count (0 for an event that only adds bytes, such as the end of a stream). */
  readonly calls: number;
  /** Credits charged (after refunds). */
  readonly credits: number;
  /** Bytes served to the client, when known. */
  readonly bytes: number;
  /** Whether the call ended in an error. */
  readonly failed: boolean;
  /** For a call a response cache considered: whether it was answered from the cache (`hit`) or not (`miss`). */
  readonly cache?: 'hit' | 'miss' | undefined;
}

/** Records usage per key, per day and per method. Implemented in memory by the core and by store plugins. */
export interface UsageRecorder {
  /** Adds one event. */
  record(event: UsageEvent): MaybePromise<void>;
  /**
   * Totals per method of `keyId` on the UTC `day` (`YYYY-MM-DD`), for operators (admin API, CLI).
   * Optional: a recorder that only forwards events elsewhere need not answer.
   */
  usage?(keyId: string, day: string): MaybePromise<Record<string, UsageTotals>>;
}

/** Totals of usage for one key, day and method. */
export interface UsageTotals {
  /** Calls. */
  calls: number;
  /** Credits charged. */
  credits: number;
  /** Bytes served. */
  bytes: number;
  /** Calls that ended in an error. */
  failed: number;
  /** Calls answered from a response cache (present once a cache considered one of the calls). */
  cacheHits?: number;
  /** Cacheable calls that went upstream (present once a cache considered one of the calls). */
  cacheMisses?: number;
}

/** A {@link UsageRecorder} in process memory, with totals per key, UTC day and method. */
export class MemoryUsageRecorder implements UsageRecorder {
  /** Totals by UTC day, key id and method: nested maps, so recording a call builds no string key. */
  readonly #totals = new Map<string, Map<string, Map<string, UsageTotals>>>();
  readonly #dayCache = new UtcDayCache();

  record(event: UsageEvent): void {
    const day = this.#dayCache.dayOf(event.at);
    let keys = this.#totals.get(day);
    if (keys === undefined) this.#totals.set(day, (keys = new Map()));
    let methods = keys.get(event.keyId);
    if (methods === undefined) keys.set(event.keyId, (methods = new Map()));
    let totals = methods.get(event.method);
    if (totals === undefined) methods.set(event.method, (totals = { calls: 0, credits: 0, bytes: 0, failed: 0 }));
    totals.calls += event.calls;
    totals.credits += event.credits;
    totals.bytes += event.bytes;
    if (event.failed) totals.failed += event.calls;
    if (event.cache === 'hit') totals.cacheHits = (totals.cacheHits ?? 0) + event.calls;
    else if (event.cache === 'miss') totals.cacheMisses = (totals.cacheMisses ?? 0) + event.calls;
  }

  /** Totals per method of `keyId` on the UTC `day` (`YYYY-MM-DD`). */
  usage(keyId: string, day: string): Record<string, UsageTotals> {
    return Object.fromEntries([...(this.#totals.get(day)?.get(keyId) ?? [])].map(([method, totals]) => [method, { ...totals }]));
  }
}

/** The usage event of a finished call (credits and bytes count only for a call that was answered). */
export function usageOf(ctx: RequestContext, at: number): UsageEvent | undefined {
  if (ctx.key === undefined) return undefined;
  const body = ctx.reply?.body;
  return {
    keyId: ctx.key.id,
    network: ctx.network.name,
    method: ctx.call.method,
    at,
    calls: 1,
    credits: ctx.error === undefined && ctx.debit !== undefined ? ctx.debit.credits : 0,
    // An answer that reached nobody (the call failed after it came, or was cancelled) served no bytes.
    bytes: ctx.error === undefined && body instanceof Uint8Array ? body.byteLength : 0,
    failed: ctx.error !== undefined,
    cache: ctx.cache,
  };
}
