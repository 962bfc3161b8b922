import { UtcDayCache, type UsageEvent, type UsageRecorder, type UsageTotals } from '../../core/index.js';
import type { RedisConnection } from './connection.js';

const DAY_MS = 86_400_000;

/** Longest method name kept as is; longer ones (never a real method) are cut. */
const MAX_METHOD_LENGTH = 64;

/** Distinct key, day and method totals held in memory at most while Redis is away; beyond, new ones are dropped. */
export const MAX_PENDING_USAGE = 100_000;

interface Pending extends UsageTotals {
  readonly keyId: string;
  readonly day: string;
  readonly method: string;
  /** The latest event's time: the hash expires `retainDays` after its day ends, by the gateway's clock. */
  at: number;
}

/**
 * Usage counters per key, UTC day and method in Redis hashes (`<prefix>use:<day>:<key id>`, fields
 * `<method>|calls`, `|credits`, `|bytes`, `|failed`) that expire by themselves `retainDays` after their
 * day. Events are added up in memory and written every `usageFlushMs` (and when the gateway stops); while
 * Redis is unreachable they keep adding up, and are written once it is back.
 */
export class RedisUsageRecorder implements UsageRecorder {
  readonly #conn: RedisConnection;
  readonly #prefix: string;
  readonly #retainMs: number;
  readonly #days = new UtcDayCache();
  #pending = new Map<string, Pending>();
  #dropped = 0;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#prefix = `${connection.settings.prefix}use:`;
    this.#retainMs = connection.settings.retainDays * DAY_MS;
    connection.onReady(() => this.flush());
  }

  /** Events dropped because too many distinct totals were waiting for Redis. */
  get dropped(): number {
    return this.#dropped;
  }

  record(event: UsageEvent): void {
    const method = event.method.length > MAX_METHOD_LENGTH ? event.method.slice(0, MAX_METHOD_LENGTH) : event.method;
    const day = this.#days.dayOf(event.at);
    const slot = `${day}:${event.keyId}\n${method}`;
    let pending = this.#pending.get(slot);
    if (pending === undefined) {
      if (this.#pending.size >= MAX_PENDING_USAGE) {
        this.#dropped++;
        return;
      }
      pending = { keyId: event.keyId, day, method, calls: 0, credits: 0, bytes: 0, failed: 0, at: event.at };
      this.#pending.set(slot, pending);
    }
    pending.calls += event.calls;
    pending.credits += event.credits;
    pending.bytes += event.bytes;
    if (event.failed) pending.failed += event.calls;
    pending.at = Math.max(pending.at, event.at);
  }

  /** Writes the totals gathered so far; what cannot be written is kept for the next try. */
  async flush(): Promise<void> {
    if (this.#pending.size === 0 || !this.#conn.ready) return;
    const batch = this.#pending;
    this.#pending = new Map();
    const byHash = new Map<string, Pending[]>();
    for (const p of batch.values()) {
      const hash = `${this.#prefix}${p.day}:${p.keyId}`;
      const list = byHash.get(hash);
      if (list === undefined) byHash.set(hash, [p]);
      else list.push(p);
    }
    const writes = [...byHash].map(async ([hash, list]) => {
      const dayEnds = Date.parse(`${list[0]!.day}T00:00:00Z`) + DAY_MS;
      const ttl = Math.max(1, dayEnds - Math.max(...list.map((p) => p.at)) + this.#retainMs);
      const groups = list.flatMap((p) => [p.method, p.calls, p.credits, p.bytes, p.failed]);
      try {
        await this.#conn.client.tgUsage(hash, ttl, ...groups);
      } catch (error) {
        for (const p of list) this.#merge(p);
        throw error;
      }
    });
    const failed = (await Promise.allSettled(writes)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  async usage(keyId: string, day: string): Promise<Record<string, UsageTotals>> {
    const fields = await this.#conn.client.hgetall(`${this.#prefix}${day}:${keyId}`);
    const out: Record<string, UsageTotals> = {};
    for (const [field, value] of Object.entries(fields)) {
      const bar = field.lastIndexOf('|');
      const method = field.slice(0, bar);
      const name = field.slice(bar + 1) as keyof UsageTotals;
      const totals = (out[method] ??= { calls: 0, credits: 0, bytes: 0, failed: 0 });
      if (name in totals) totals[name] = Number(value);
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  #merge(p: Pending): void {
    const slot = `${p.day}:${p.keyId}\n${p.method}`;
    const pending = this.#pending.get(slot);
    if (pending === undefined) {
      this.#pending.set(slot, { ...p });
      return;
    }
    pending.calls += p.calls;
    pending.credits += p.credits;
    pending.bytes += p.bytes;
    pending.failed += p.failed;
    pending.at = Math.max(pending.at, p.at);
  }
}
