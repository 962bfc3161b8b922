import { PendingUsage, UtcDayCache, daysBetween, newDebitId, type UsageEvent, type UsageRecorder, type UsageRow, type UsageTotals } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';
import { PendingWrites } from './pending-writes.js';

const DAY_MS = 86_400_000;

/** Longest method name kept as is; longer ones (never a real method) are cut. */
const MAX_METHOD_LENGTH = 64;

/** Distinct key, day and method totals held in memory at most while Redis is away; beyond, new ones are dropped. */
export const MAX_PENDING_USAGE = 100_000;

/** One script call: the totals of one usage hash, under an id of their own. */
interface UsageWrite {
  readonly hash: string;
  readonly id: string;
  readonly ttlMs: number;
  readonly groups: ReadonlyArray<string | number>;
}

/**
 * Usage counters per key, UTC day, network and method in Redis hashes (`<prefix>usage:<day>:{<key id>}`,
 * fields `<network>|<method>|calls`, `|credits`, `|bytes`, `|failed`, and `|cacheHits`, `|cacheMisses` once
 * a response cache counted one) that expire by themselves `retainDays` after their day. Network names
 * hold no `|`, so a field splits at its first and last bar. The hashes earlier versions wrote
 * (`<prefix>use:…`, by method only) are read too, as network `''`, until they expire.
 * Events are added up in memory and written every `usageFlushMs` (and when the gateway stops); while
 * Redis is unreachable they keep adding up, and are written once it is back.
 *
 * Each write carries an id that the script keeps for the idempotency window, and a write that fails is
 * sent again unchanged (same id, same totals), never merged into later totals: a write that timed out
 * but ran in Redis anyway is not counted twice.
 */
export class RedisUsageRecorder implements UsageRecorder {
  readonly #conn: RedisConnection;
  readonly #retainMs: number;
  readonly #days = new UtcDayCache();
  readonly #pending = new PendingUsage();
  readonly #unsent: PendingWrites<UsageWrite>;
  #dropped = 0;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#retainMs = connection.settings.retainDays * DAY_MS;
    this.#unsent = new PendingWrites(connection.settings.maxPendingWrites, connection.settings.idempotencyWindowMs);
    connection.onReady(() => this.flush());
  }

  /** Events dropped because too many distinct totals were waiting for Redis, plus writes dropped for waiting too long. */
  get dropped(): number {
    return this.#dropped + this.#unsent.dropped;
  }

  record(event: UsageEvent): void {
    const method = event.method.length > MAX_METHOD_LENGTH ? event.method.slice(0, MAX_METHOD_LENGTH) : event.method;
    if (!this.#pending.add(event, this.#days.dayOf(event.at), method, MAX_PENDING_USAGE)) this.#dropped++;
  }

  /** Writes the totals gathered so far, and writes that failed before; what cannot be written is kept for the next try. */
  async flush(): Promise<void> {
    if (!this.#conn.ready) return;
    if (this.#pending.size > 0) this.#seal();
    if (this.#unsent.size === 0) return;
    const window = this.#conn.settings.idempotencyWindowMs;
    const before = this.#unsent.dropped;
    try {
      await this.#unsent.drainConcurrently((w) => this.#conn.replicated(w.hash, this.#conn.client.tgUsage(w.hash, this.#conn.names.markerBeside(w.hash, w.id), w.ttlMs, window, ...w.groups)));
    } finally {
      if (this.#unsent.dropped > before) this.#conn.dropped('usage', this.#unsent.dropped);
    }
  }

  /** Turns the totals gathered so far into writes, one per usage hash, each with its id. */
  #seal(): void {
    const byHash = new Map<string, ReturnType<PendingUsage['take']>>();
    for (const p of this.#pending.take()) {
      const hash = this.#conn.names.usage(p.day, p.keyId);
      const list = byHash.get(hash);
      if (list === undefined) byHash.set(hash, [p]);
      else list.push(p);
    }
    for (const [hash, list] of byHash) {
      const dayEnds = Date.parse(`${list[0]!.day}T00:00:00Z`) + DAY_MS;
      const ttlMs = Math.max(1, dayEnds - Math.max(...list.map((p) => p.at)) + this.#retainMs);
      const groups = list.flatMap((p) => [`${p.network}|${p.method}`, p.calls, p.credits, p.bytes, p.failed, p.cacheHits, p.cacheMisses]);
      if (!this.#unsent.push({ hash, id: newDebitId(), ttlMs, groups })) this.#conn.dropped('usage', this.#unsent.dropped);
    }
  }

  async usage(keyId: string, day: string): Promise<Record<string, UsageTotals>> {
    const out: Record<string, UsageTotals> = {};
    for (const row of await this.#dayRows(keyId, day)) {
      const totals = (out[row.method] ??= { calls: 0, credits: 0, bytes: 0, failed: 0 });
      totals.calls += row.calls;
      totals.credits += row.credits;
      totals.bytes += row.bytes;
      totals.failed += row.failed;
      if (row.cacheHits !== undefined) totals.cacheHits = (totals.cacheHits ?? 0) + row.cacheHits;
      if (row.cacheMisses !== undefined) totals.cacheMisses = (totals.cacheMisses ?? 0) + row.cacheMisses;
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => byCodeUnit(a, b)));
  }

  /**
   * Reads the usage hashes of one key and day at a time (one hash slot, whatever the number of keys: no
   * scan across a Cluster), so an export holds one day of one key at most.
   */
  async *usageRows(keyIds: readonly string[], from: string, to: string): AsyncGenerator<UsageRow> {
    for (const day of daysBetween(from, to)) {
      for (const keyId of keyIds) yield* await this.#dayRows(keyId, day);
    }
  }

  /** One key's rows on one day, by network and method: this version's hash, and the by-method one of earlier versions. */
  async #dayRows(keyId: string, day: string): Promise<UsageRow[]> {
    const [byNetwork, byMethod] = await Promise.all([
      this.#conn.client.hgetall(this.#conn.names.usage(day, keyId)),
      this.#conn.client.hgetall(this.#conn.names.usageByMethod(day, keyId)),
    ]);
    const rows = new Map<string, UsageTotals & { network: string; method: string }>();
    const add = (network: string, method: string, name: string, value: string): void => {
      const slot = `${network}|${method}`;
      let row = rows.get(slot);
      if (row === undefined) rows.set(slot, (row = { network, method, calls: 0, credits: 0, bytes: 0, failed: 0 }));
      // The cache counts exist only once a cache counted one, as in the memory recorder.
      if (name === 'calls' || name === 'credits' || name === 'bytes' || name === 'failed' || name === 'cacheHits' || name === 'cacheMisses') row[name] = Number(value);
    };
    for (const [field, value] of Object.entries(byMethod)) {
      const bar = field.lastIndexOf('|');
      add('', field.slice(0, bar), field.slice(bar + 1), value);
    }
    for (const [field, value] of Object.entries(byNetwork)) {
      const first = field.indexOf('|');
      const last = field.lastIndexOf('|');
      add(field.slice(0, first), field.slice(first + 1, last), field.slice(last + 1), value);
    }
    return [...rows.values()]
      .sort((a, b) => byCodeUnit(a.network, b.network) || byCodeUnit(a.method, b.method))
      .map(({ network, method, ...totals }) => ({ day, keyId, network, method, ...totals }));
  }
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
