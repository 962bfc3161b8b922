import type { Logger } from 'pino';
import { ioredis } from './peers.js';
import { Errors, GatewayError } from '../../core/plugin-api.js';
import { CLAIM_HASH, DEBIT, INSERT, RELEASE_HASH, REFUND, REPLACE_PLAN, SETTLE, TAKE, TAKE_DEBIT, TAKE_DEBIT_BATCH, TOP_UP, UPDATE, USAGE } from './scripts.js';
import { RedisKeyNames } from './key-names.js';
import { storeAddress, type ResolvedRedisSettings } from './settings.js';
import { retryUntil } from './start-deadline.js';
import { subscribeWithin } from './subscribe-within.js';
import { checkTopology, createRedisClient, seedIsPlainRedis, topologyOf, type AnyRedis, type RedisTopology } from './client.js';

/** The store's Lua scripts, as commands of the client. */
export interface ScriptCommands {
  /** `DEBIT` */
  tgDebit(balance: string, marker: string, paid: string, credits: number, limit: number, ttlMs: number, windowMs: number): Promise<[number, number, number, number]>;
  /** `SETTLE` */
  tgSettle(balance: string, marker: string, credits: number, ttlMs: number, windowMs: number): Promise<number>;
  /** `REFUND` */
  tgRefund(balance: string, marker: string, paid: string, dayCredits: number, known: 0 | 1, windowMs: number, paidCredits: number): Promise<number>;
  /** `TOP_UP` */
  tgTopUp(paid: string, topUps: string, credits: number, topUpId: string): Promise<number>;
  /** `TAKE` */
  tgTake(bucket: string, cost: number, perSecond: number, burst: number, now: number): Promise<[number, number]>;
  /** `TAKE_DEBIT` */
  tgTakeDebit(bucket: string, balance: string, marker: string, paid: string, cost: number, perSecond: number, burst: number, now: number, credits: number, limit: number, ttlMs: number, windowMs: number): Promise<[number, number, number, number, number, number]>;
  /** `TAKE_DEBIT_BATCH` */
  tgTakeDebitBatch(bucket: string, balance: string, marker: string, paid: string, perSecond: number, burst: number, now: number, limit: number, ttlMs: number, windowMs: number, ...costs: number[]): Promise<number[]>;
  /** `USAGE` */
  tgUsage(usage: string, marker: string, ttlMs: number, windowMs: number, ...groups: Array<string | number>): Promise<number>;
  /** `INSERT` */
  tgInsert(record: string, keyHash: string, ...fields: string[]): Promise<number>;
  /** `UPDATE` */
  tgUpdate(record: string, ...fields: string[]): Promise<[number, string]>;
  /** `CLAIM_HASH` */
  tgClaimHash(hashEntry: string, id: string, staleId: string): Promise<number>;
  /** `RELEASE_HASH` */
  tgReleaseHash(hashEntry: string, id: string): Promise<number>;
  /** `REPLACE_PLAN` */
  tgReplacePlan(plans: string, name: string, read: string, value: string): Promise<number>;
}

/** An ioredis client (one Redis or a Cluster) with the store's scripts. */
export type StoreClient = AnyRedis & ScriptCommands;

/** A write that fewer replicas than `replicaAcks` took in time (see {@link RedisConnection.replicated}). */
export class ReplicaAckError extends Error {
  constructor(acked: number, wanted: number) {
    super(`NOREPLICAS ${acked} of ${wanted} replicas took the write in time`);
    this.name = 'ReplicaAckError';
  }
}

/** A change of the connection's state, as logged and exported as metrics. */
export interface ConnectionTransition {
  /** The new state. */
  readonly state: 'down' | 'up';
  /** How long the previous state lasted, in ms (since the connection opened, for the first outage). */
  readonly afterMs: number;
}

/**
 * The store's connection to Redis: an ioredis client that reconnects by itself (backoff up to one
 * second), never queues commands while disconnected and never resends a command whose answer was lost
 * (a debit must not land twice), so every failure reaches the policy at once. Components register what
 * to do when Redis is back (write down credits spent locally, refunds, usage).
 *
 * The connection is down from the first failure (a closed socket or a command that timed out: a stalled
 * Redis keeps its socket open) until Redis answers again (a reconnect, or a `PING` probe while the socket
 * stayed open). Each transition is logged once, with how long the previous state lasted, and reported
 * to the listeners of {@link RedisConnection.onTransition}.
 */
export class RedisConnection {
  /** The client. */
  readonly client: StoreClient;
  /** The settings. */
  readonly settings: ResolvedRedisSettings;
  /** Where the store is, for logs and errors (never the URL, which may hold a password): see {@link storeAddress}. */
  readonly address: string;
  /** One Redis, Sentinel or a Cluster. */
  readonly topology: RedisTopology;
  /** The names of the store's Redis keys. */
  readonly names: RedisKeyNames;
  readonly #logger: Logger | undefined;
  readonly #onReady: Array<() => Promise<void> | void> = [];
  readonly #onTransition: Array<(transition: ConnectionTransition) => void> = [];
  #down = false;
  #since = Date.now();
  /** Kinds of writes whose drops were logged during the current state, so a flood logs once. */
  readonly #droppedLogged = new Set<string>();
  #probe: NodeJS.Timeout | undefined;
  #closed = false;
  /** The catch-up run going now, and the one queued behind it. */
  #catchingUp: Promise<void> | undefined;
  #catchUpAgain: Promise<void> | undefined;
  /** Who waits, in {@link RedisConnection.whenReady}, for Redis to be reachable. */
  readonly #readyWaiters = new Set<() => void>();
  #timer: NodeJS.Timeout | undefined;

  constructor(settings: ResolvedRedisSettings, logger?: Logger) {
    this.settings = settings;
    this.address = storeAddress(settings);
    this.topology = topologyOf(settings);
    this.names = new RedisKeyNames(settings.prefix);
    this.#logger = logger;
    this.client = createRedisClient(ioredis, settings, {
      commandTimeoutMs: settings.commandTimeoutMs,
      connectTimeoutMs: settings.connectTimeoutMs,
      autoPipelining: true,
      // The charge scripts carry batches the ledger groups itself (see RedisCreditLedger.takeAndDebit).
      writtenAtOnce: ['tgTakeDebit', 'tgTakeDebitBatch'],
      retryDelay: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 5), 1000),
    }) as StoreClient;
    const scripts: Array<[keyof ScriptCommands, number, string]> = [
      ['tgDebit', 3, DEBIT],
      ['tgSettle', 2, SETTLE],
      ['tgRefund', 3, REFUND],
      ['tgTopUp', 2, TOP_UP],
      ['tgTake', 1, TAKE],
      ['tgTakeDebit', 4, TAKE_DEBIT],
      ['tgTakeDebitBatch', 4, TAKE_DEBIT_BATCH],
      ['tgUsage', 2, USAGE],
      ['tgInsert', 1, INSERT],
      ['tgUpdate', 1, UPDATE],
      ['tgClaimHash', 1, CLAIM_HASH],
      ['tgReleaseHash', 1, RELEASE_HASH],
      ['tgReplacePlan', 1, REPLACE_PLAN],
    ];
    for (const [name, numberOfKeys, lua] of scripts) this.client.defineCommand(name, { numberOfKeys, lua });
    // ioredis reports connection errors here; without a listener it prints them itself.
    this.client.on('error', (error: Error & { code?: string }) => this.#wentDown(error.code ?? error.name));
    this.client.on('close', () => this.#wentDown('connection closed'));
    this.client.on('ready', () => {
      this.#cameBack();
      this.#wakeReadyWaiters();
    });
  }

  /**
   * Resolves with `written`'s answer once `settings.replicaAcks` replicas of the master that holds `key`
   * have it (Redis `WAIT` on that master's connection, which the write used), at once when none are asked
   * for. Rejects (a `NOREPLICAS` error) when fewer took it within half the command timeout: the
   * caller treats the write as failed (its id makes a cancellation or a resend safe).
   */
  replicated<T>(key: string, written: Promise<T>): Promise<T> {
    // Without replicas to wait for, the write's own promise: no extra hop on every debit.
    return this.settings.replicaAcks === 0 ? written : this.#afterReplicas(key, written);
  }

  async #afterReplicas<T>(key: string, written: Promise<T>): Promise<T> {
    const answer = await written;
    const wanted = this.settings.replicaAcks;
    // The key routes the pipeline to the slot's master in a Cluster; WAIT itself has no key.
    const results = await this.client.pipeline().pttl(key).call('WAIT', wanted, Math.max(1, Math.floor(this.settings.commandTimeoutMs / 2))).exec();
    const [error, acked] = results?.[1] ?? [new Error('no answer to WAIT'), 0];
    if (error !== null) throw error;
    if (Number(acked) < wanted) throw new ReplicaAckError(Number(acked), wanted);
    return answer;
  }

  /** Whether commands can be sent now: connected, and not stalled since the last failure. */
  get ready(): boolean {
    return !this.#down && this.client.status === 'ready';
  }

  /** Whether the connection is down (see the class comment). */
  get down(): boolean {
    return this.#down;
  }

  /**
   * Resolves true as soon as Redis is reachable (at once when it is), false after `timeoutMs` or when the
   * connection is closed meanwhile. For a clean stop, which has writes to send before it closes.
   */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(this.ready);
      };
      const timer = setTimeout(() => {
        this.#readyWaiters.delete(wake);
        resolve(false);
      }, timeoutMs);
      this.#readyWaiters.add(wake);
    });
  }

  #wakeReadyWaiters(): void {
    if (!this.ready) return;
    const waiters = [...this.#readyWaiters];
    this.#readyWaiters.clear();
    for (const wake of waiters) wake();
  }

  /** Calls `listener` on every transition (down, up). */
  onTransition(listener: (transition: ConnectionTransition) => void): void {
    this.#onTransition.push(listener);
  }

  /**
   * Registers catch-up work (writing down what piled up while Redis was away): run as soon as Redis is
   * reachable again, then every `usageFlushMs` while it is, so work that failed is retried. Must be
   * idempotent and do nothing when nothing is pending.
   */
  onReady(hook: () => Promise<void> | void): void {
    this.#onReady.push(hook);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.catchUp(), this.settings.usageFlushMs);
      this.#timer.unref();
    }
  }

  /**
   * Runs the catch-up work now, if Redis is reachable. When a run is already going, one more runs after it
   * (shared by every caller meanwhile) and the promise settles with that one: what was recorded before the
   * call is written when it resolves, which a clean stop relies on.
   */
  catchUp(): Promise<void> {
    if (this.#catchingUp === undefined) {
      this.#catchingUp = this.#runReadyHooks().finally(() => { this.#catchingUp = undefined; });
      return this.#catchingUp;
    }
    this.#catchUpAgain ??= this.#catchingUp.then(() => {
      this.#catchUpAgain = undefined;
      return this.catchUp();
    });
    return this.#catchUpAgain;
  }

  async #runReadyHooks(): Promise<void> {
    if (!this.ready) return;
    for (const hook of this.#onReady) {
      try {
        await hook();
      } catch (error) {
        this.failed(error);
      }
    }
  }

  /**
   * Connects, waiting until `deadline` (default: `startTimeoutMs` from now) while the client retries with
   * its backoff: a Redis that starts late, or a Cluster still electing masters, delays the start instead
   * of failing it. Every `connectTimeoutMs` of waiting is logged, and a Cluster's seed that turns out to be
   * a plain Redis is refused at once. Then checks that the Redis is of the kind the settings name (see
   * `checkTopology`).
   *
   * @throws Error naming the address when Redis cannot be reached by the deadline, or is of another kind.
   */
  async connect(deadline = Date.now() + this.settings.startTimeoutMs): Promise<void> {
    const startedAt = Date.now();
    const ready = new Promise<'ready'>((resolve) => this.client.once('ready', () => resolve('ready')));
    this.client.connect().catch(() => { /* retried by the client; the deadline below decides */ });
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const wait = Math.max(1, Math.min(this.settings.connectTimeoutMs, deadline - Date.now()));
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), wait)));
      const outcome = await Promise.race([ready, late]);
      clearTimeout(timer);
      if (outcome === 'ready') break;
      if (this.topology === 'cluster' && (await seedIsPlainRedis(ioredis, this.settings, Math.min(this.settings.connectTimeoutMs, 1000)))) {
        this.client.disconnect();
        throw new Error(`Redis at ${this.address} is not a Redis Cluster: name it with --redis <url> (plugins.ledger-redis.url) instead of --redis-cluster`);
      }
      if (Date.now() >= deadline) {
        this.client.disconnect();
        throw new Error(`cannot reach Redis at ${this.address} within startTimeoutMs (${this.settings.startTimeoutMs} ms)`);
      }
      this.#logger?.warn({ redis: this.address, waitedMs: Date.now() - startedAt, startTimeoutMs: this.settings.startTimeoutMs }, 'waiting for Redis at start');
    }
    try {
      await checkTopology(this.client, this.settings, this.address, { single: '--redis <url> (plugins.ledger-redis.url)', cluster: '--redis-cluster <host:port,…> (plugins.ledger-redis.cluster.nodes)' });
    } catch (error) {
      this.client.disconnect();
      throw error;
    }
  }

  /**
   * Connects `subscriber` (a duplicate of the client) and subscribes it to `channel`, retried with backoff
   * until `deadline`: a Cluster slow to answer, or a subscription refused for a while, delays the start
   * instead of failing it. Each attempt is bounded by `connectTimeoutMs`: a subscriber stuck on a Cluster
   * that has converged since (its slots refresh never retried) is dropped and connected afresh.
   *
   * @throws Error naming the channel, the address and `startTimeoutMs` once the deadline has passed.
   */
  subscribeAtStart(subscriber: AnyRedis, channel: string, deadline: number): Promise<void> {
    return retryUntil(`cannot subscribe to "${channel}" on Redis at ${this.address}`, deadline, 'startTimeoutMs', (left) => subscribeWithin(subscriber, channel, Math.min(left, this.settings.connectTimeoutMs), this.address), this.#logger);
  }

  /** Closes the connection (after `flush`, by the caller). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const wake of this.#readyWaiters) wake();
    this.#readyWaiters.clear();
    clearInterval(this.#timer);
    clearInterval(this.#probe);
    clearTimeout(this.#replicaRetry);
    if (this.ready) {
      await this.client.quit().catch(() => this.client.disconnect());
    } else {
      this.client.disconnect();
    }
  }

  /** The error a metered call gets while Redis cannot be reached. */
  unavailable(reason = `the credit ledger (Redis at ${this.address}) is unreachable`): GatewayError {
    return new GatewayError(Errors.METERING_UNAVAILABLE, { message: reason, headers: { 'retry-after': '1' }, data: { retryAfterSeconds: 1 } });
  }

  /**
   * Notes that writes of `kind` were dropped (a full queue while Redis is away, or too old to send
   * safely): logged once per kind and connection state, with the running total.
   */
  dropped(kind: string, total: number): void {
    if (this.#droppedLogged.has(kind)) return;
    this.#droppedLogged.add(kind);
    this.#logger?.error({ redis: this.address, kind, dropped: total }, 'writes dropped while Redis was unreachable');
  }

  /**
   * Notes a failed command: logs the outage once. A Cluster's answer about one slot (`TRYAGAIN` while a
   * slot migrates, `CLUSTERDOWN`, too many redirections) fails that command only: the other slots, on
   * other masters, still answer, so the store is not down for them.
   */
  failed(error: unknown): void {
    if (this.topology === 'cluster' && /^(TRYAGAIN|CLUSTERDOWN|Too many Cluster redirections)/.test((error as Error).message ?? '')) return;
    // A replica behind is not a Redis down: the master answers. The writes that were queued are sent again
    // a command timeout later (the outage-free path has no reconnect to trigger it).
    if (error instanceof ReplicaAckError) {
      this.#retryAfterReplicaLag();
      return;
    }
    this.#wentDown((error as { code?: string }).code ?? (error as Error).message ?? 'command failed');
  }

  #replicaRetry: NodeJS.Timeout | undefined;

  #retryAfterReplicaLag(): void {
    if (this.#replicaRetry !== undefined || this.#closed) return;
    this.#replicaRetry = setTimeout(() => {
      this.#replicaRetry = undefined;
      void this.catchUp();
    }, this.settings.commandTimeoutMs);
    this.#replicaRetry.unref();
  }

  #wentDown(reason: string): void {
    if (this.#down || this.#closed) return;
    this.#down = true;
    const upMs = this.#transition('down');
    this.#logger?.warn({ redis: this.address, reason, policy: this.settings.whenUnavailable, upMs }, 'Redis unreachable');
    // A stalled Redis keeps its socket open, so no reconnect will tell when it answers again: ask it.
    clearInterval(this.#probe);
    this.#probe = setInterval(() => this.#ping(), Math.min(this.settings.commandTimeoutMs, 250));
    this.#probe.unref();
  }

  #ping(): void {
    if (this.client.status !== 'ready') return;
    this.client.ping().then(() => this.#cameBack(), () => { /* still down; the next probe asks again */ });
  }

  #cameBack(): void {
    if (!this.#down || this.#closed) return;
    this.#down = false;
    clearInterval(this.#probe);
    this.#probe = undefined;
    const downMs = this.#transition('up');
    this.#logger?.info({ redis: this.address, downMs }, 'Redis reachable again');
    this.#wakeReadyWaiters();
    void this.catchUp();
  }

  /** Marks a transition to `state`; returns how long the previous state lasted, in ms. */
  #transition(state: 'down' | 'up'): number {
    const now = Date.now();
    const afterMs = now - this.#since;
    this.#since = now;
    this.#droppedLogged.clear();
    for (const listener of this.#onTransition) listener({ state, afterMs });
    return afterMs;
  }
}
