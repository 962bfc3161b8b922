// The usage port: what one finished call records, and the recorder that keeps daily totals.
import type { RequestContext } from './request-context.js';
import type { MaybePromise } from '../util/maybe-promise.js';

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
  /**
   * The usage of the keys `keyIds` on every UTC day from `from` to `to` (`YYYY-MM-DD`, both included),
   * one row per day, key, network and method, for exports (billing). Rows come day by day, then by key
   * in the order given, then by network and method; read lazily, so that a long range is never held in
   * memory at once. Optional, like {@link UsageRecorder.usage}.
   */
  usageRows?(keyIds: readonly string[], from: string, to: string): AsyncIterable<UsageRow>;
}

/** One row of a usage export: the totals of one key on one UTC day, network and method. */
export interface UsageRow extends UsageTotals {
  /** The UTC day (`YYYY-MM-DD`). */
  readonly day: string;
  /** The key's id. */
  readonly keyId: string;
  /** The network's name; empty for usage recorded before stores kept networks apart. */
  readonly network: string;
  /** The method or command. */
  readonly method: string;
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
