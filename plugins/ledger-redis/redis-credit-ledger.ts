import { MemoryCreditLedger, nextUtcMidnight, utcDay, type Balance, type CreditLedger, type DebitReceipt, type DebitResult } from '../../core/index.js';
import type { RedisConnection } from './connection.js';

const DAY_MS = 86_400_000;

/**
 * Daily balances shared by every gateway instance through Redis. A debit is one Lua script (check and
 * take in one atomic step), so two instances can never both spend a key's last credits; a balance key
 * expires by itself `retainDays` after its day ends.
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
