import { usageOf, type CallObserver, type Clock, type RequestContext } from '../../core/plugin-api.js';
import { utcDay, type UsageTotals } from '../../core/store-api.js';
import { workerMembership } from '../workers/index.js';

/** A key's calls over some days, by network and by outcome, as the dashboard charts them. */
export interface KeyTraffic {
  /** The first UTC day counted (`YYYY-MM-DD`). */
  readonly from: string;
  /** The last UTC day counted. */
  readonly to: string;
  /** When counting started (ISO 8601): the process's start; earlier calls are not in these totals. */
  readonly since: string;
  /** Totals by network. */
  readonly networks: Record<string, UsageTotals>;
  /**
   * Calls by outcome: `200` for calls answered, otherwise `<HTTP status> <error name>`
   * (`403 FORBIDDEN`, `429 RATE_LIMITED`...).
   */
  readonly outcomes: Record<string, number>;
}

/** The question a worker's recorder answers with its counts, gathered by any worker for the group's. */
const TRAFFIC_TOPIC = 'admin-traffic';

/** Longest a count is kept, in days. */
const KEEP_DAYS = 92;

/**
 * Counts every call by key, UTC day, network and outcome, in this process's memory, for the dashboard's
 * "per network" and "errors by status" charts (the store's usage has no statuses, and the per-key usage
 * the page reads is per method).
 * Credits count as usage counts them: only debits that stood. Days older than 92 are dropped.
 */
export class TrafficRecorder implements CallObserver {
  readonly #clock: Clock;
  readonly #since: number;
  // key id -> day -> { networks, outcomes }
  readonly #byKey = new Map<string, Map<string, { networks: Map<string, UsageTotals>; outcomes: Map<string, number> }>>();

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#since = clock.now();
    workerMembership()?.answer(TRAFFIC_TOPIC, (payload) => {
      const { keyId, from, to } = payload as { keyId: string; from: string; to: string };
      return this.traffic(keyId, from, to);
    });
  }

  /**
   * `keyId`'s totals as `traffic`, for the whole gateway: in a worker of `--workers n`, every
   * worker's counts added up (each counts the calls it answered); otherwise this process's.
   */
  async groupTraffic(keyId: string, from: string, to: string): Promise<KeyTraffic> {
    const membership = workerMembership();
    if (membership === undefined) return this.traffic(keyId, from, to);
    const parts = (await membership.gather(TRAFFIC_TOPIC, { keyId, from, to })) as KeyTraffic[];
    const networks: Record<string, UsageTotals> = {};
    const outcomes: Record<string, number> = {};
    let since = this.#since;
    for (const part of parts) {
      since = Math.min(since, Date.parse(part.since));
      for (const [network, totals] of Object.entries(part.networks)) {
        const sum = (networks[network] ??= { calls: 0, credits: 0, bytes: 0, failed: 0 });
        sum.calls += totals.calls;
        sum.credits += totals.credits;
        sum.bytes += totals.bytes;
        sum.failed += totals.failed;
      }
      for (const [outcome, count] of Object.entries(part.outcomes)) outcomes[outcome] = (outcomes[outcome] ?? 0) + count;
    }
    return { from, to, since: new Date(since).toISOString(), networks, outcomes };
  }

  callFinished(ctx: RequestContext): void {
    const event = usageOf(ctx, this.#clock.now());
    if (event === undefined) return;
    const day = utcDay(new Date(event.at));
    let days = this.#byKey.get(event.keyId);
    if (days === undefined) this.#byKey.set(event.keyId, (days = new Map()));
    let slot = days.get(day);
    if (slot === undefined) {
      days.set(day, (slot = { networks: new Map(), outcomes: new Map() }));
      this.#prune(days);
    }
    const totals = slot.networks.get(event.network) ?? { calls: 0, credits: 0, bytes: 0, failed: 0 };
    totals.calls += event.calls;
    totals.credits += event.credits;
    totals.bytes += event.bytes;
    totals.failed += event.failed ? 1 : 0;
    slot.networks.set(event.network, totals);
    const outcome = ctx.error === undefined ? '200' : `${ctx.error.httpStatus} ${ctx.error.entry.name}`;
    slot.outcomes.set(outcome, (slot.outcomes.get(outcome) ?? 0) + 1);
  }

  /** `keyId`'s totals from `from` to `to` (UTC days, inclusive). */
  traffic(keyId: string, from: string, to: string): KeyTraffic {
    const networks: Record<string, UsageTotals> = {};
    const outcomes: Record<string, number> = {};
    for (const [day, slot] of this.#byKey.get(keyId) ?? []) {
      if (day < from || day > to) continue;
      for (const [network, totals] of slot.networks) {
        const sum = (networks[network] ??= { calls: 0, credits: 0, bytes: 0, failed: 0 });
        sum.calls += totals.calls;
        sum.credits += totals.credits;
        sum.bytes += totals.bytes;
        sum.failed += totals.failed;
      }
      for (const [outcome, count] of slot.outcomes) outcomes[outcome] = (outcomes[outcome] ?? 0) + count;
    }
    return { from, to, since: new Date(this.#since).toISOString(), networks, outcomes };
  }

  #prune(days: Map<string, unknown>): void {
    const oldest = utcDay(new Date(this.#clock.now() - KEEP_DAYS * 86_400_000));
    for (const day of days.keys()) if (day < oldest) days.delete(day);
  }
}
