import type { RequestContext } from '../contracts/request-context.js';
import { UtcDayCache } from '../util/utc-day.js';
import type { UsageEvent, UsageRecorder, UsageRow, UsageTotals } from '../contracts/usage.js';

const DAY_MS = 86_400_000;

/** Every UTC day from `from` to `to` (`YYYY-MM-DD`, both included), in order. */
export function* daysBetween(from: string, to: string): Generator<string> {
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= end; at += DAY_MS) yield new Date(at).toISOString().slice(0, 10);
}

/** Orders strings by code unit, as the stores order methods and networks. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A {@link UsageRecorder} in process memory, with totals per key, UTC day, network and method. */
export class MemoryUsageRecorder implements UsageRecorder {
  /** Totals by UTC day, key id, network and method: nested maps, so recording a call builds no string key. */
  readonly #totals = new Map<string, Map<string, Map<string, Map<string, UsageTotals>>>>();
  readonly #dayCache = new UtcDayCache();

  record(event: UsageEvent): void {
    const day = this.#dayCache.dayOf(event.at);
    let keys = this.#totals.get(day);
    if (keys === undefined) this.#totals.set(day, (keys = new Map()));
    let networks = keys.get(event.keyId);
    if (networks === undefined) keys.set(event.keyId, (networks = new Map()));
    let methods = networks.get(event.network);
    if (methods === undefined) networks.set(event.network, (methods = new Map()));
    let totals = methods.get(event.method);
    if (totals === undefined) methods.set(event.method, (totals = { calls: 0, credits: 0, bytes: 0, failed: 0 }));
    addEvent(totals, event);
  }

  /** Totals per method of `keyId` on the UTC `day` (`YYYY-MM-DD`), over every network. */
  usage(keyId: string, day: string): Record<string, UsageTotals> {
    const out: Record<string, UsageTotals> = {};
    for (const methods of this.#totals.get(day)?.get(keyId)?.values() ?? []) {
      for (const [method, totals] of methods) out[method] = addTotals(out[method], totals);
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => byCodeUnit(a, b)));
  }

  async *usageRows(keyIds: readonly string[], from: string, to: string): AsyncGenerator<UsageRow> {
    for (const day of daysBetween(from, to)) {
      for (const keyId of keyIds) {
        const networks = this.#totals.get(day)?.get(keyId);
        if (networks === undefined) continue;
        for (const network of [...networks.keys()].sort(byCodeUnit)) {
          const methods = networks.get(network)!;
          for (const method of [...methods.keys()].sort(byCodeUnit)) yield { day, keyId, network, method, ...methods.get(method)! };
        }
      }
    }
  }
}

/** Adds one event to `totals`. */
function addEvent(totals: UsageTotals, event: UsageEvent): void {
  totals.calls += event.calls;
  totals.credits += event.credits;
  totals.bytes += event.bytes;
  if (event.failed) totals.failed += event.calls;
  if (event.cache === 'hit') totals.cacheHits = (totals.cacheHits ?? 0) + event.calls;
  else if (event.cache === 'miss') totals.cacheMisses = (totals.cacheMisses ?? 0) + event.calls;
}

/** `sum` plus `more` (a new object; the cache counts only where either has them). */
export function addTotals(sum: UsageTotals | undefined, more: UsageTotals): UsageTotals {
  const out: UsageTotals = { calls: (sum?.calls ?? 0) + more.calls, credits: (sum?.credits ?? 0) + more.credits, bytes: (sum?.bytes ?? 0) + more.bytes, failed: (sum?.failed ?? 0) + more.failed };
  if (sum?.cacheHits !== undefined || more.cacheHits !== undefined) out.cacheHits = (sum?.cacheHits ?? 0) + (more.cacheHits ?? 0);
  if (sum?.cacheMisses !== undefined || more.cacheMisses !== undefined) out.cacheMisses = (sum?.cacheMisses ?? 0) + (more.cacheMisses ?? 0);
  return out;
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
