import { listLimit, settledEntry, settlingEntry, type JournalEntry, type JournalQuery, type PaymentJournal, type PaymentState, type SettledPayment, type SettlingPayment } from './payment-journal.js';

/** The commands of an ioredis client (one Redis or a Cluster) the Redis journal sends. */
export interface JournalRedisClient {
  /** Runs a Lua script. */
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
  /** Every field of a hash. */
  hgetall(key: string): Promise<Record<string, string>>;
  /** Members of a sorted set by rank, lowest score first. */
  zrange(key: string, start: number, stop: number): Promise<string[]>;
  /** Members of a sorted set by rank, highest score first. */
  zrevrange(key: string, start: number, stop: number): Promise<string[]>;
}

/** What the Redis journal needs of the store's connection (ledger-redis's `store.connection` has it). */
export interface JournalRedis {
  /** The client (it may be replaced on reconnection: read it at each use). */
  readonly client: JournalRedisClient;
  /** The store's settings: its key `prefix`. */
  readonly settings: {
    /** What every key name of the store starts with. */
    readonly prefix: string;
  };
}

// Every name carries the one hash tag `{x402}`: a Redis Cluster keeps the journal in one hash slot, so each
// script below (an entry and the sets that index it) runs on one node. Payments are rare next to calls,
// so one slot is not a hot spot.
const TAG = '{x402}';

/**
 * KEYS: entry, open set, key's set, payer's set, every entry's set. ARGV: id, score (ms), then the hash's
 * fields as name, value pairs, `state` first. Records the entry only when its id is new (HSETNX on
 * `state`: the SET NX of a hash), and indexes it in the same step. 1 recorded, 0 there already.
 */
const RECORD = `
if redis.call('HSETNX', KEYS[1], ARGV[3], ARGV[4]) == 0 then return 0 end
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1])
return 1`;

/**
 * KEYS: entry, open set. ARGV: id, the states it may be in (`,settling,failed,`), the open set's change
 * (`add`, `remove` or `keep`), then fields as name, value pairs (`state` among them; `-` as a value
 * deletes the field). 1 moved, 0 not in one of those states.
 */
const MOVE = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state or not string.find(ARGV[2], ',' .. state .. ',', 1, true) then return 0 end
for i = 4, #ARGV, 2 do
  if ARGV[i + 1] == '-' then redis.call('HDEL', KEYS[1], ARGV[i]) else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
local score = redis.call('HGET', KEYS[1], 'startedAt')
if ARGV[3] == 'remove' then redis.call('ZREM', KEYS[2], ARGV[1]) elseif ARGV[3] == 'add' then redis.call('ZADD', KEYS[2], score, ARGV[1]) end
return 1`;

const num = (value: string | undefined): number | undefined => (value === undefined || value === '' ? undefined : Number(value));

function entryOf(hash: Record<string, string>): JournalEntry | undefined {
  if (hash.state === undefined || hash.data === undefined) return undefined;
  const d = JSON.parse(hash.data) as Partial<JournalEntry> & Pick<JournalEntry, 'id' | 'keyId' | 'plan' | 'credits' | 'payer' | 'network' | 'asset' | 'amount' | 'payTo' | 'startedAt'>;
  return {
    id: d.id, keyId: d.keyId, plan: d.plan, credits: d.credits, payer: d.payer, network: d.network, asset: d.asset, amount: d.amount, payTo: d.payTo,
    state: hash.state as PaymentState, nonce: d.nonce, validBefore: d.validBefore, payload: d.payload, requirements: d.requirements, startedAt: d.startedAt,
    transaction: hash.tx, settledAt: num(hash.settledAt), creditedAt: num(hash.creditedAt), failure: hash.failure,
  };
}

/**
 * The {@link PaymentJournal} in Redis, shared by every instance of a fleet (the ledger-redis store's
 * Redis, Sentinel or Cluster). An entry is a hash `<prefix>x402:{x402}:p:<id>`: `data` (what never
 * changes, as JSON) and its state fields. Recording is one script that makes the hash only when absent
 * (two instances recording one id: one wins); each move of state a script that checks the state before
 * it. Entries not finished (`settling`, `settled`) are in the sorted set `…:open` (by time), which
 * `unfinished()` and `uncredited()` read; `…:key:<key id>`, `…:payer:<address>` and `…:all` index them
 * for listing.
 */
export class RedisPaymentJournal implements PaymentJournal {
  readonly #redis: JournalRedis;
  readonly #base: string;

  constructor(redis: JournalRedis) {
    this.#redis = redis;
    this.#base = `${redis.settings.prefix}x402:${TAG}:`;
  }

  /** See {@link PaymentJournal.begin}. */
  async begin(payment: SettlingPayment): Promise<boolean> {
    return this.#record(settlingEntry(payment));
  }

  /** See {@link PaymentJournal.record}. */
  async record(payment: SettledPayment): Promise<boolean> {
    return this.#record(settledEntry(payment));
  }

  /** See {@link PaymentJournal.markSettled}. */
  async markSettled(id: string, transaction: string, at: number): Promise<boolean> {
    // Back into the open set: a payment marked failed and then found settled on chain is credited next.
    return this.#move(id, ',settling,failed,', 'add', ['state', 'settled', 'tx', transaction, 'settledAt', at, 'failure', '-']);
  }

  /** See {@link PaymentJournal.markFailed}. */
  async markFailed(id: string, failure: string, at: number): Promise<boolean> {
    return this.#move(id, ',settling,', 'remove', ['state', 'failed', 'failure', failure, 'settledAt', at]);
  }

  /** See {@link PaymentJournal.markCredited}. */
  async markCredited(id: string, at: number): Promise<boolean> {
    return this.#move(id, ',settled,', 'remove', ['state', 'credited', 'creditedAt', at]);
  }

  /** See {@link PaymentJournal.get}. */
  async get(id: string): Promise<JournalEntry | undefined> {
    return entryOf(await this.#redis.client.hgetall(this.#entry(id)));
  }

  /** See {@link PaymentJournal.unfinished}. */
  async unfinished(): Promise<readonly JournalEntry[]> {
    return this.#entries(await this.#redis.client.zrange(`${this.#base}open`, 0, -1));
  }

  /** See {@link PaymentJournal.uncredited}. */
  async uncredited(): Promise<readonly JournalEntry[]> {
    return (await this.unfinished()).filter((e) => e.state === 'settled');
  }

  /** See {@link PaymentJournal.list}. */
  async list(query: JournalQuery): Promise<readonly JournalEntry[]> {
    const limit = listLimit(query);
    const payer = query.payer?.toLowerCase();
    const set = query.keyId !== undefined ? this.#byKey(query.keyId) : payer !== undefined ? this.#byPayer(payer) : `${this.#base}all`;
    // By key and payer: the key's entries, filtered (a key's payments are few).
    const ids = await this.#redis.client.zrevrange(set, 0, query.keyId !== undefined && payer !== undefined ? -1 : limit - 1);
    const entries = await this.#entries(ids);
    return entries.filter((e) => payer === undefined || e.payer.toLowerCase() === payer).slice(0, limit);
  }

  async #record(entry: JournalEntry): Promise<boolean> {
    const { state, transaction, settledAt, ...data } = entry;
    const fields: Array<string | number> = ['state', state, 'startedAt', entry.startedAt, 'data', JSON.stringify({ ...data, creditedAt: undefined, failure: undefined })];
    if (transaction !== undefined) fields.push('tx', transaction);
    if (settledAt !== undefined) fields.push('settledAt', settledAt);
    const made = await this.#redis.client.eval(
      RECORD, 5, this.#entry(entry.id), `${this.#base}open`, this.#byKey(entry.keyId), this.#byPayer(entry.payer.toLowerCase()), `${this.#base}all`,
      entry.id, entry.startedAt, ...fields,
    );
    return made === 1;
  }

  async #move(id: string, from: string, open: 'add' | 'remove', fields: Array<string | number>): Promise<boolean> {
    return (await this.#redis.client.eval(MOVE, 2, this.#entry(id), `${this.#base}open`, id, from, open, ...fields)) === 1;
  }

  async #entries(ids: readonly string[]): Promise<JournalEntry[]> {
    const entries = await Promise.all(ids.map((id) => this.get(id)));
    return entries.filter((e): e is JournalEntry => e !== undefined);
  }

  #entry(id: string): string {
    return `${this.#base}p:${id}`;
  }

  #byKey(keyId: string): string {
    return `${this.#base}key:${keyId}`;
  }

  #byPayer(payer: string): string {
    return `${this.#base}payer:${payer}`;
  }
}
