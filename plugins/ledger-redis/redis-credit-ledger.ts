import { MemoryCreditLedger, nextUtcMidnight, utcDay, type Balance, type CreditLedger, type DebitReceipt, type DebitResult, type RateDecision } from '../../core/index.js';
import type { RedisConnection } from './connection.js';

const DAY_MS = 86_400_000;

/** Keys whose daily limit an instance remembers for combined takes, at most; past it, it starts over. */
const MAX_REMEMBERED_LIMITS = 100_000;

/** A debit taken together with a throughput bucket, waiting for the `debit()` call it answers. */
interface Prepaid {
  readonly credits: number;
  readonly limit: number;
  readonly day: string;
  readonly result: DebitResult;
}

/**
 * Daily balances shared by every gateway instance through Redis. A debit is one Lua script (check and
 * take in one atomic step), so two instances can never both spend a key's last credits; a balance key
 * expires by itself `retainDays` after its day ends.
 *
 * The gateway's meter takes a key's throughput bucket, then debits it. When the ledger has seen the key's
 * daily limit, the {@link RedisRateLimiter} runs both in one script ({@link RedisCreditLedger.takeAndDebit}),
 * and `debit()` answers from that result without a second round trip; a combined debit that no `debit()`
 * claims within the same event-loop turn is refunded.
 *
 * While Redis is unreachable the connection's policy applies: `refuse` fails the call with
 * `METERING_UNAVAILABLE`; `allowance` takes the debit from a local allowance and writes it to Redis once
 * Redis is back.
 */
export class RedisCreditLedger implements CreditLedger {
  readonly #conn: RedisConnection;
  readonly #prefix: string;
  readonly #retainMs: number;
  readonly #refunded = new WeakSet<DebitReceipt>();
  /** Debits taken from the local allowance, and credits of them not yet written to Redis, by balance key. */
  readonly #local = new MemoryCreditLedger();
  readonly #localReceipts = new WeakMap<DebitReceipt, DebitReceipt>();
  readonly #owed = new Map<string, number>();
  /** Refunds that could not reach Redis, retried when it is back. */
  readonly #pendingRefunds: DebitReceipt[] = [];
  /** Each key's last known balance use, so the local allowance never exceeds what the day has left. */
  readonly #lastUsed = new Map<string, number>();
  /** Daily limits by key id, learned from `debit()` calls. */
  readonly #limits = new Map<string, number>();
  /** Combined debits by key id, oldest first, until `debit()` claims them. */
  readonly #prepaid = new Map<string, Prepaid[]>();
  #sweepScheduled = false;
  #day = '';
  #dayEnds = 0;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#prefix = `${connection.settings.prefix}bal:`;
    this.#retainMs = connection.settings.retainDays * DAY_MS;
    connection.onReady(() => this.#catchUp());
  }

  /** Credits spent from local allowances and not yet written to Redis. */
  get owed(): number {
    let total = 0;
    for (const credits of this.#owed.values()) total += credits;
    return total;
  }

  debit(keyId: string, credits: number, dailyLimit: number, now: Date): DebitResult | Promise<DebitResult> {
    const day = this.#today(now);
    if (this.#limits.get(keyId) !== dailyLimit) {
      if (this.#limits.size >= MAX_REMEMBERED_LIMITS) this.#limits.clear();
      this.#limits.set(keyId, dailyLimit);
    }
    const prepaid = this.#claim(keyId, credits, dailyLimit, day);
    if (prepaid !== undefined) return prepaid;
    const slot = `${this.#prefix}${day}:${keyId}`;
    if (!this.#conn.ready) return this.#offline(slot, keyId, day, credits, dailyLimit, now);
    // Expiry is relative to the gateway's clock (the day ends for it), so an injected clock works too.
    return this.#conn.client.tgDebit(slot, credits, dailyLimit, this.#dayEnds - now.getTime() + this.#retainMs).then(
      ([ok, used]): DebitResult => {
        this.#lastUsed.set(slot, used);
        if (ok === 1) return { ok: true, receipt: { keyId, day, credits }, remaining: dailyLimit - used };
        return { ok: false, remaining: Math.max(0, dailyLimit - used), resetsAt: nextUtcMidnight(now) };
      },
      (error: unknown) => {
        this.#conn.failed(error);
        return this.#offline(slot, keyId, day, credits, dailyLimit, now);
      },
    );
  }

  /**
   * Takes `cost` tokens from `bucketKey` and, if they were there, debits `cost` credits from `keyId`'s
   * balance under the daily limit last seen for it, in one script; the debit waits for the `debit()` call
   * that follows. Undefined when the limit is not known yet or Redis is unreachable (take the bucket
   * alone). Rejects when the command fails.
   */
  takeAndDebit(bucketKey: string, keyId: string, cost: number, perSecond: number, burst: number, now: number): Promise<RateDecision> | undefined {
    const limit = this.#limits.get(keyId);
    if (limit === undefined || !this.#conn.ready) return undefined;
    const at = new Date(now);
    const day = this.#today(at);
    const slot = `${this.#prefix}${day}:${keyId}`;
    return this.#conn.client.tgTakeDebit(bucketKey, slot, cost, perSecond, burst, now, cost, limit, this.#dayEnds - now + this.#retainMs).then(
      ([passed, retryAfterMs, ok, used]): RateDecision => {
        if (passed !== 1) return { ok: false, retryAfterMs };
        this.#lastUsed.set(slot, used);
        const result: DebitResult =
          ok === 1 ? { ok: true, receipt: { keyId, day, credits: cost }, remaining: limit - used } : { ok: false, remaining: Math.max(0, limit - used), resetsAt: nextUtcMidnight(at) };
        this.#hold(keyId, { credits: cost, limit, day, result });
        return { ok: true };
      },
      (error: unknown) => {
        this.#conn.failed(error);
        throw error;
      },
    );
  }

  refund(receipt: DebitReceipt): void | Promise<void> {
    if (this.#refunded.has(receipt)) return;
    this.#refunded.add(receipt);
    const slot = `${this.#prefix}${receipt.day}:${receipt.keyId}`;
    const local = this.#localReceipts.get(receipt);
    if (local !== undefined) {
      this.#local.refund(local);
      const owed = this.#owed.get(slot) ?? 0;
      // Still owed to Redis: just owe less. Already written down: give it back in Redis too.
      if (owed >= receipt.credits) {
        this.#owe(slot, -receipt.credits);
        return;
      }
    }
    if (!this.#conn.ready) {
      this.#pendingRefunds.push(receipt);
      return;
    }
    return this.#conn.client.tgRefund(slot, receipt.credits).then(
      () => {},
      (error: unknown) => {
        this.#conn.failed(error);
        this.#pendingRefunds.push(receipt);
      },
    );
  }

  async balance(keyId: string, dailyLimit: number, now: Date): Promise<Balance> {
    const day = utcDay(now);
    const slot = `${this.#prefix}${day}:${keyId}`;
    const used = Number((await this.#conn.client.get(slot)) ?? 0) + (this.#owed.get(slot) ?? 0);
    return { day, used, remaining: Math.max(0, dailyLimit - used), resetsAt: nextUtcMidnight(now) };
  }

  #offline(slot: string, keyId: string, day: string, credits: number, dailyLimit: number, now: Date): DebitResult {
    if (this.#conn.settings.whenUnavailable === 'refuse') throw this.#conn.unavailable();
    const left = Math.max(0, dailyLimit - (this.#lastUsed.get(slot) ?? 0));
    const allowance = this.#conn.settings.localAllowance;
    // What the local ledger has taken today counts against the allowance; the day's balance caps it too.
    const result = this.#local.debit(slot, credits, Math.min(allowance, left), now);
    if (!result.ok) {
      // The day's balance, not the allowance, is what ran out: the key's ordinary refusal.
      if (left <= allowance) return { ok: false, remaining: result.remaining, resetsAt: nextUtcMidnight(now) };
      throw this.#conn.unavailable(`the credit ledger (Redis at ${this.#conn.address}) is unreachable and this instance's local allowance for the key is spent`);
    }
    const receipt: DebitReceipt = { keyId, day, credits };
    this.#localReceipts.set(receipt, result.receipt);
    this.#owe(slot, credits);
    return { ok: true, receipt, remaining: result.remaining };
  }

  #hold(keyId: string, prepaid: Prepaid): void {
    const queue = this.#prepaid.get(keyId);
    if (queue === undefined) this.#prepaid.set(keyId, [prepaid]);
    else queue.push(prepaid);
    if (this.#sweepScheduled) return;
    this.#sweepScheduled = true;
    // debit() follows its take within the same turn of the event loop; whatever is left after it was never claimed.
    setImmediate(() => {
      this.#sweepScheduled = false;
      const left = [...this.#prepaid.values()].flat();
      this.#prepaid.clear();
      for (const { result } of left) if (result.ok) void this.refund(result.receipt);
    });
  }

  #claim(keyId: string, credits: number, limit: number, day: string): DebitResult | undefined {
    const queue = this.#prepaid.get(keyId);
    if (queue === undefined) return undefined;
    const at = queue.findIndex((p) => p.credits === credits && p.limit === limit && p.day === day);
    if (at === -1) return undefined;
    const [prepaid] = queue.splice(at, 1);
    if (queue.length === 0) this.#prepaid.delete(keyId);
    return prepaid!.result;
  }

  #owe(slot: string, credits: number): void {
    const owed = (this.#owed.get(slot) ?? 0) + credits;
    if (owed === 0) this.#owed.delete(slot);
    else this.#owed.set(slot, owed);
  }

  /** Writes down what was spent locally and refunds that could not be sent. */
  async #catchUp(): Promise<void> {
    for (const [slot, credits] of [...this.#owed]) {
      await this.#conn.client.tgSettle(slot, credits, DAY_MS + this.#retainMs);
      this.#owe(slot, -credits);
    }
    while (this.#pendingRefunds.length > 0) {
      const receipt = this.#pendingRefunds[0]!;
      await this.#conn.client.tgRefund(`${this.#prefix}${receipt.day}:${receipt.keyId}`, receipt.credits);
      this.#pendingRefunds.shift();
    }
  }

  #today(now: Date): string {
    const ms = now.getTime();
    if (ms >= this.#dayEnds || ms < this.#dayEnds - DAY_MS) {
      this.#day = utcDay(now);
      this.#dayEnds = nextUtcMidnight(now).getTime();
      this.#lastUsed.clear();
    }
    return this.#day;
  }
}
