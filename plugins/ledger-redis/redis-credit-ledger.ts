import type { TAKE_DEBIT, TAKE_DEBIT_BATCH } from './scripts.js';
import { chargeOf, MemoryCreditLedger, newDebitId, nextUtcMidnight, utcDay, type Balance, type Charge, type CreditLedger, type DebitReceipt, type DebitResult } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';
import { PendingWrites } from './pending-writes.js';
import type { RedisKeyNames } from './key-names.js';

const DAY_MS = 86_400_000;

/** A refund (or the cancellation of a debit whose command timed out) waiting for Redis. */
interface RefundWrite {
  readonly slot: string;
  /** The key's paid balance (`<prefix>paid:{<key id>}`). */
  readonly paidKey: string;
  readonly id: string;
  /** Credits back into the day. */
  readonly credits: number;
  /** Credits back into the paid balance. */
  readonly paid: number;
  /** 1 when Redis answered the debit (it was taken), 0 when its outcome is unknown. */
  readonly known: 0 | 1;
}

/** Credits spent from a local allowance, being written to Redis under an id of their own. */
interface Settlement {
  readonly slot: string;
  readonly id: string;
  readonly credits: number;
}

/** A call waiting in a `TakeBatch`. */
interface BatchedTake {
  readonly cost: number;
  readonly resolve: (charge: Charge) => void;
  readonly reject: (error: unknown) => void;
}

/** The combined takes of one key (same bucket, balance and limits) asked for during two event-loop turns. */
interface TakeBatch {
  readonly bucketKey: string;
  readonly keyId: string;
  readonly slot: string;
  readonly paidKey: string;
  readonly day: string;
  readonly perSecond: number;
  readonly burst: number;
  readonly limit: number;
  /** The latest call's time: the bucket refills up to it. */
  now: number;
  readonly takes: BatchedTake[];
}

/** A key's batch group under one set of limits on one day, and its names. */
interface TakeGroup {
  readonly group: string;
  readonly slot: string;
  readonly paidKey: string;
  readonly day: string;
  readonly bucketKey: string;
  readonly perSecond: number;
  readonly burst: number;
  readonly limit: number;
}

/** Keys whose batch groups are kept at once. */
const MAX_KNOWN_GROUPS = 10_000;

/**
 * Daily balances and paid balances shared by every gateway instance through Redis. A debit is one Lua
 * script (check and take in one atomic step, reading the day's balance and the paid one, both under the
 * key's hash tag), so two instances can never both spend a key's last credits; a day's balance key
 * expires by itself `retainDays` after its day ends, a paid balance never. A top-up is one script too
 * (`TOP_UP`), adding once per top-up id.
 *
 * A call's throughput bucket and its debit are one script ({@link RedisCreditLedger.takeAndDebit}, which
 * the store's `Metering`, {@link RedisMetering}, charges every call through). The takes of one key that
 * arrive during two turns of the event loop go to Redis together, as one script that takes them one
 * after the other (`TAKE_DEBIT_BATCH`): under load, one command serves many calls, each charged exactly
 * as alone. A key has at most one such script in Redis at a time from this instance: the calls that
 * arrive meanwhile wait for its answer and go as the next one, so the busier the key, the more calls a
 * script serves, for the same few commands inside it.
 *
 * While Redis is unreachable the connection's policy applies: `refuse` fails the call with
 * `METERING_UNAVAILABLE`; `allowance` takes the debit from a local allowance of the day's balance and
 * writes it to Redis once Redis is back (the paid balance is spent only through Redis: a key whose day
 * is spent and that had paid credits left gets `METERING_UNAVAILABLE`, not a 402).
 *
 * Every debit has an id, and every script keyed on it applies at most once (see the scripts). A debit
 * whose command fails or times out may still run in Redis later, so it is cancelled by id (once Redis
 * answers again): it is given back if it ran, and becomes a no-op if it has not yet. Refunds that cannot
 * be sent wait in a bounded queue ({@link PendingWrites}) and are sent again with the same id; nothing
 * else is ever re-sent.
 */
export class RedisCreditLedger implements CreditLedger {
  readonly #conn: RedisConnection;
  readonly #names: RedisKeyNames;
  readonly #retainMs: number;
  readonly #windowMs: number;
  readonly #refunded = new WeakSet<DebitReceipt>();
  /** Debits taken from the local allowance, and credits of them not yet written to Redis, by balance key. */
  readonly #local = new MemoryCreditLedger();
  readonly #localReceipts = new WeakMap<DebitReceipt, DebitReceipt>();
  readonly #owed = new Map<string, number>();
  /** Local credits being written to Redis, each batch under its id until Redis confirms it. */
  readonly #settling: PendingWrites<Settlement>;
  /** Refunds and cancellations that could not reach Redis, sent again (same id) when it is back. */
  readonly #pendingRefunds: PendingWrites<RefundWrite>;
  /** Each key's last known balance use, so the local allowance never exceeds what the day has left. */
  readonly #lastUsed = new Map<string, number>();
  /** Each key's last known paid balance, by key id. */
  readonly #lastPaid = new Map<string, number>();
  /**
   * Combined takes waiting to be sent, by key, bucket and limits: until the end of this event-loop turn,
   * or until the answer to that group's script in Redis now.
   */
  readonly #batches = new Map<string, TakeBatch>();
  /** The groups with a script in Redis now: their next batch waits for its answer. */
  readonly #inFlight = new Set<string>();
  /** Each key's batch group and names, by key id (see {@link RedisCreditLedger.#groupOf}). */
  readonly #groups = new Map<string, TakeGroup>();
  #flushScheduled = false;
  #day = '';
  #dayEnds = 0;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#names = connection.names;
    this.#retainMs = connection.settings.retainDays * DAY_MS;
    this.#windowMs = connection.settings.idempotencyWindowMs;
    this.#settling = new PendingWrites(connection.settings.maxPendingWrites, this.#windowMs);
    this.#pendingRefunds = new PendingWrites(connection.settings.maxPendingWrites, this.#windowMs);
    connection.onReady(() => this.#catchUp());
  }

  /** Credits spent from local allowances and not yet written to Redis. */
  get owed(): number {
    let total = 0;
    for (const credits of this.#owed.values()) total += credits;
    for (const settlement of this.#settling.values()) total += settlement.credits;
    return total;
  }

  /** Refunds and cancellations waiting for Redis. */
  get pendingRefunds(): number {
    return this.#pendingRefunds.size;
  }

  /** Writes dropped because they waited too long or too many waited (each is logged). */
  get droppedWrites(): number {
    return this.#pendingRefunds.dropped + this.#settling.dropped;
  }

  debit(keyId: string, credits: number, dailyLimit: number, now: Date): DebitResult | Promise<DebitResult> {
    const day = this.#today(now);
    const slot = this.#names.balance(day, keyId);
    if (!this.#conn.ready) return this.#offline(slot, keyId, day, credits, dailyLimit, now);
    const id = newDebitId();
    const paidKey = this.#names.paid(keyId);
    // Expiry is relative to the gateway's clock (the day ends for it), so an injected clock works too.
    return this.#conn.replicated(slot, this.#conn.client.tgDebit(slot, this.#names.markerBeside(slot, id), paidKey, credits, dailyLimit, this.#dayEnds - now.getTime() + this.#retainMs, this.#windowMs)).then(
      ([ok, used, paidLeft, paidTaken]): DebitResult => {
        this.#lastUsed.set(slot, used);
        this.#lastPaid.set(keyId, paidLeft);
        if (ok === 1) return { ok: true, receipt: { id, keyId, day, credits, paid: paidTaken }, remaining: Math.max(0, dailyLimit - used), paidRemaining: paidLeft };
        if (ok === 2) throw this.#conn.unavailable();
        return { ok: false, remaining: Math.max(0, dailyLimit - used), paidRemaining: paidLeft, resetsAt: nextUtcMidnight(now) };
      },
      (error: unknown) => {
        this.#conn.failed(error);
        this.#cancel(slot, paidKey, id, credits);
        return this.#offline(slot, keyId, day, credits, dailyLimit, now);
      },
    );
  }

  /**
   * Takes `cost` tokens from the bucket `bucketKey` (a Redis key) and, if they were there, debits `cost`
   * credits from `keyId`'s day under the daily `limit` and the rest from its paid balance, in one script: the whole charge of a call. Takes
   * of one key asked for during two event-loop turns go as one script. A taken charge refunds through
   * this ledger. Rejects when the command fails (the batch is then cancelled by its id); call it only
   * while the connection is ready.
   */
  takeAndDebit(bucketKey: string, keyId: string, cost: number, perSecond: number, burst: number, limit: number, now: number): Promise<Charge> {
    const day = this.#todayAt(now);
    const { group, slot, paidKey } = this.#groupOf(bucketKey, keyId, day, perSecond, burst, limit);
    let batch = this.#batches.get(group);
    if (batch === undefined) {
      batch = { bucketKey, keyId, slot, paidKey, day, perSecond, burst, limit, now, takes: [] };
      this.#batches.set(group, batch);
      // Every call the poll phases of this turn and the next parse joins the batch; the script goes
      // right after them, or once the group's script in Redis has answered.
      if (!this.#inFlight.has(group)) this.#scheduleFlush();
    }
    batch.now = Math.max(batch.now, now);
    const joined = batch;
    return new Promise((resolve, reject) => joined.takes.push({ cost, resolve, reject }));
  }

  /**
   * The batch group of a key's takes on `day` under these limits, and the key's names: kept per key id
   * while they stay the same, so a call builds no names (a key's calls ask the same thing all day).
   */
  #groupOf(bucketKey: string, keyId: string, day: string, perSecond: number, burst: number, limit: number): TakeGroup {
    const known = this.#groups.get(keyId);
    if (known !== undefined && known.day === day && known.bucketKey === bucketKey && known.perSecond === perSecond && known.burst === burst && known.limit === limit) return known;
    const slot = this.#names.balance(day, keyId);
    const made: TakeGroup = { group: `${slot}\n${bucketKey}\n${perSecond}\n${burst}\n${limit}`, slot, paidKey: this.#names.paid(keyId), day, bucketKey, perSecond, burst, limit };
    // Bounded: an instance serving more keys than this rebuilds the names of the ones it forgot.
    if (this.#groups.size >= MAX_KNOWN_GROUPS) this.#groups.clear();
    this.#groups.set(keyId, made);
    return made;
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // The batches stay open through the next turn's poll phase as well, and their scripts are written
    // at once, outside ioredis's auto-pipelining (which took that turn too, and built a pipeline object
    // for each): the same wait, more calls per script, less work per call.
    setImmediate(() => setImmediate(() => this.#flushBatches()));
  }

  /**
   * Sends the batches of the groups with no script in Redis. A group's batch waits while its previous
   * script is in Redis, so under load a key's calls of several turns share one script (fewer commands
   * per call, the same outcome for each); the wait is at most that script's round trip. A batch whose
   * turn comes while Redis is unreachable is not sent: its calls fail with `METERING_UNAVAILABLE`, which
   * {@link RedisMetering} answers with the connection's policy, as for a script that failed.
   */
  #flushBatches(): void {
    this.#flushScheduled = false;
    for (const [group, batch] of [...this.#batches]) {
      if (this.#inFlight.has(group)) continue;
      this.#batches.delete(group);
      if (!this.#conn.ready) {
        for (const take of batch.takes) take.reject(this.#conn.unavailable());
        continue;
      }
      let sent: Promise<void>;
      try {
        sent = this.#sendBatch(batch);
      } catch (error) {
        // A client that throws rather than rejects: the batch fails as a failed script would, and no
        // group is left marked in flight with nothing to clear it.
        for (const take of batch.takes) take.reject(error);
        continue;
      }
      this.#inFlight.add(group);
      void sent.finally(() => {
        this.#inFlight.delete(group);
        if (this.#batches.has(group)) this.#scheduleFlush();
      });
    }
  }

  /**
   * Sends a key's batch as one script (`TAKE_DEBIT_BATCH` under one id: the calls' debits are
   * `<id>.<n>`, each refundable by itself), or as `TAKE_DEBIT` when it holds one call.
   */
  #sendBatch(batch: TakeBatch): Promise<void> {
    const { bucketKey, keyId, slot, paidKey, day, perSecond, burst, limit, now, takes } = batch;
    const id = newDebitId();
    const marker = this.#names.markerBeside(slot, id);
    // From the batch's own day: a batch that waited past midnight keeps its day's expiry.
    const ttlMs = Math.max(1, Date.parse(`${day}T00:00:00Z`) + DAY_MS - now + this.#retainMs);
    const sent = this.#conn.replicated<number[]>(
      slot,
      takes.length === 1
        ? this.#conn.client.tgTakeDebit(bucketKey, slot, marker, paidKey, takes[0]!.cost, perSecond, burst, now, takes[0]!.cost, limit, ttlMs, this.#windowMs)
        : this.#conn.client.tgTakeDebitBatch(bucketKey, slot, marker, paidKey, perSecond, burst, now, limit, ttlMs, this.#windowMs, ...takes.map((take) => take.cost)),
    );
    return sent.then(
      (answer) => {
        if (answer[0] === -1) {
          for (const take of takes) take.reject(this.#conn.unavailable());
          return;
        }
        const at = new Date(now);
        takes.forEach((take, i) => {
          // Six numbers per call, read in place (no copy per call).
          const at6 = i * 6;
          const passed = answer[at6]!;
          const retryAfterMs = answer[at6 + 1]!;
          const ok = answer[at6 + 2]!;
          const used = answer[at6 + 3]!;
          const paidLeft = answer[at6 + 4]!;
          const paidTaken = answer[at6 + 5]!;
          if (passed !== 1) return take.resolve({ ok: false, code: 'RATE_LIMITED', retryAfterMs });
          // A cancelled single debit (2) is a failure too; taken again by a resend (1) is a success.
          if (ok === 2) return take.reject(this.#conn.unavailable());
          this.#lastUsed.set(slot, used);
          this.#lastPaid.set(keyId, paidLeft);
          const receipt: DebitReceipt = { id: takes.length === 1 ? id : `${id}.${i}`, keyId, day, credits: take.cost, paid: paidTaken };
          const result: DebitResult = ok === 1
            ? { ok: true, receipt, remaining: Math.max(0, limit - used), paidRemaining: paidLeft }
            : { ok: false, remaining: Math.max(0, limit - used), paidRemaining: paidLeft, resetsAt: nextUtcMidnight(at) };
          take.resolve(chargeOf(this, result));
        });
      },
      (error: unknown) => {
        this.#conn.failed(error);
        // The whole batch is cancelled by its id: what it took is given back if it ran, and it becomes a no-op if not.
        this.#cancel(slot, paidKey, id, takes.reduce((sum, take) => sum + take.cost, 0));
        for (const take of takes) take.reject(error);
      },
    );
  }

  refund(receipt: DebitReceipt): void | Promise<void> {
    if (this.#refunded.has(receipt)) return;
    this.#refunded.add(receipt);
    const slot = this.#names.balance(receipt.day, receipt.keyId);
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
    return this.#send({ slot, paidKey: this.#names.paid(receipt.keyId), id: receipt.id, credits: receipt.credits - receipt.paid, paid: receipt.paid, known: 1 });
  }

  /**
   * Adds `credits` to the key's paid balance once per `topUpId` (`TOP_UP`: the id joins the key's set of
   * applied top-ups in the same script). Fails with `METERING_UNAVAILABLE` while Redis is unreachable:
   * a top-up is never kept locally.
   */
  async topUp(keyId: string, credits: number, topUpId: string): Promise<boolean> {
    if (!this.#conn.ready) throw this.#conn.unavailable();
    const paidKey = this.#names.paid(keyId);
    const paid = await this.#conn.replicated(paidKey, this.#conn.client.tgTopUp(paidKey, this.#names.topUps(keyId), credits, topUpId));
    if (paid < 0) return false;
    this.#lastPaid.set(keyId, paid);
    return true;
  }

  async balance(keyId: string, dailyLimit: number, now: Date): Promise<Balance> {
    const day = utcDay(now);
    const slot = this.#names.balance(day, keyId);
    const [stored, paid] = await Promise.all([this.#conn.client.get(slot), this.#conn.client.get(this.#names.paid(keyId))]);
    let used = Number(stored ?? 0) + (this.#owed.get(slot) ?? 0);
    for (const settlement of this.#settling.values()) if (settlement.slot === slot) used += settlement.credits;
    return { day, used, remaining: Math.max(0, dailyLimit - used), paidRemaining: Number(paid ?? 0), resetsAt: nextUtcMidnight(now) };
  }

  #offline(slot: string, keyId: string, day: string, credits: number, dailyLimit: number, now: Date): DebitResult {
    if (this.#conn.settings.whenUnavailable === 'refuse') throw this.#conn.unavailable();
    const left = Math.max(0, dailyLimit - (this.#lastUsed.get(slot) ?? 0));
    const allowance = this.#conn.settings.localAllowance;
    // What the local ledger has taken today counts against the allowance; the day's balance caps it too.
    const result = this.#local.debit(slot, credits, Math.min(allowance, left), now);
    const paidLeft = this.#lastPaid.get(keyId) ?? 0;
    if (!result.ok) {
      // The day's balance, not the allowance, is what ran out, and no paid credits were left: the key's
      // ordinary refusal. Paid credits are spent only through Redis.
      if (left <= allowance && paidLeft === 0) return { ok: false, remaining: result.remaining, paidRemaining: 0, resetsAt: nextUtcMidnight(now) };
      if (left <= allowance) throw this.#conn.unavailable(`the credit ledger (Redis at ${this.#conn.address}) is unreachable, the key's day is spent and its paid balance is spent only through Redis`);
      throw this.#conn.unavailable(`the credit ledger (Redis at ${this.#conn.address}) is unreachable and this instance's local allowance for the key is spent`);
    }
    const receipt: DebitReceipt = { id: newDebitId(), keyId, day, credits, paid: 0 };
    this.#localReceipts.set(receipt, result.receipt);
    this.#owe(slot, credits);
    return { ok: true, receipt, remaining: result.remaining, paidRemaining: paidLeft };
  }

  /** A debit whose command failed may still run in Redis: cancel it by id once Redis answers again. */
  #cancel(slot: string, paidKey: string, id: string, credits: number): void {
    // What it took from the paid balance, if it ran, its marker says.
    this.#queue({ slot, paidKey, id, credits, paid: 0, known: 0 });
  }

  /** Sends a refund (or cancellation) now if Redis is reachable; otherwise, or if it fails, queues it. */
  #send(write: RefundWrite): void | Promise<void> {
    if (!this.#conn.ready) return this.#queue(write);
    return this.#conn.replicated(write.slot, this.#conn.client.tgRefund(write.slot, this.#names.markerBeside(write.slot, write.id), write.paidKey, write.credits, write.known, this.#windowMs, write.paid)).then(
      () => {},
      (error: unknown) => {
        this.#conn.failed(error);
        this.#queue(write);
      },
    );
  }

  #queue(write: RefundWrite): void {
    if (!this.#pendingRefunds.push(write)) this.#conn.dropped('refund', this.#pendingRefunds.dropped);
  }

  #owe(slot: string, credits: number): void {
    const owed = (this.#owed.get(slot) ?? 0) + credits;
    if (owed === 0) this.#owed.delete(slot);
    else this.#owed.set(slot, owed);
  }

  /**
   * Writes down what was spent locally (each batch under its own id, so a batch that times out and is
   * sent again lands once), then the refunds and cancellations that could not be sent.
   */
  async #catchUp(): Promise<void> {
    for (const [slot, credits] of [...this.#owed]) {
      this.#owe(slot, -credits);
      if (!this.#settling.push({ slot, id: newDebitId(), credits })) this.#conn.dropped('settlement', this.#settling.dropped);
    }
    const settled = this.#settling.dropped;
    const refunded = this.#pendingRefunds.dropped;
    try {
      await this.#settling.drain((s) => this.#conn.replicated(s.slot, this.#conn.client.tgSettle(s.slot, this.#names.markerBeside(s.slot, s.id), s.credits, DAY_MS + this.#retainMs, this.#windowMs)));
      await this.#pendingRefunds.drain((r) => this.#conn.replicated(r.slot, this.#conn.client.tgRefund(r.slot, this.#names.markerBeside(r.slot, r.id), r.paidKey, r.credits, r.known, this.#windowMs, r.paid)));
    } finally {
      if (this.#settling.dropped > settled) this.#conn.dropped('settlement', this.#settling.dropped);
      if (this.#pendingRefunds.dropped > refunded) this.#conn.dropped('refund', this.#pendingRefunds.dropped);
    }
  }

  #today(now: Date): string {
    return this.#todayAt(now.getTime());
  }

  /** The UTC day of `ms`; a Date is made only when the day changes (a charge passes its time as a number). */
  #todayAt(ms: number): string {
    if (ms >= this.#dayEnds || ms < this.#dayEnds - DAY_MS) {
      const now = new Date(ms);
      this.#day = utcDay(now);
      this.#dayEnds = nextUtcMidnight(now).getTime();
      this.#lastUsed.clear();
    }
    return this.#day;
  }
}
