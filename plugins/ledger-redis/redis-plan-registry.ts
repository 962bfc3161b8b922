import { definedOf, type PlanChangeListener, type PlanChanges, type PlanRegistry, type StoredPlan } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';
import type { AnyRedis } from './client.js';
import { subscriberBeside } from './subscribe-within.js';

/** How many times an update reads and tries again when another instance changed the plan meanwhile. */
const UPDATE_ATTEMPTS = 5;

type PlanValue = Omit<StoredPlan, 'name'>;

function planOf(name: string, json: string): StoredPlan {
  const value = JSON.parse(json) as PlanValue;
  return { name, dailyCredits: value.dailyCredits, creditsPerSecond: value.creditsPerSecond, failover: value.failover, createdAt: value.createdAt, updatedAt: value.updatedAt };
}

function valueOf(plan: StoredPlan): string {
  const { name: _name, ...value } = plan;
  return JSON.stringify({ dailyCredits: value.dailyCredits, creditsPerSecond: value.creditsPerSecond, failover: value.failover, createdAt: value.createdAt, updatedAt: value.updatedAt });
}

/**
 * Managed plans in Redis, shared by every instance: one hash (`<prefix>plans`, a field per plan holding
 * its JSON), so every command touches one hash slot of a Redis Cluster. A create is `HSETNX`, an update a
 * compare-and-set script, a delete `HDEL`; each is then published on `<prefix>plans:changed`, and every
 * instance reads the plans again. After a reconnection of the subscriber (announcements may have been
 * missed) the listeners are told too.
 */
export class RedisPlanRegistry implements PlanRegistry {
  readonly #conn: RedisConnection;
  readonly #listeners = new Set<PlanChangeListener>();
  #subscriber: AnyRedis | undefined;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
  }

  /**
   * Subscribes to plan changes made by any instance (its own included: they come back on the channel).
   *
   * @param deadline - `Date.now()` time until which a slow Redis is retried (default: `startTimeoutMs` from now).
   */
  async start(deadline = Date.now() + this.#conn.settings.startTimeoutMs): Promise<void> {
    const client = this.#conn.client;
    const subscriber = subscriberBeside(client);
    subscriber.on('error', () => { /* reported by the main connection; reconnects by itself */ });
    subscriber.on('message', () => this.#tell());
    let connected = false;
    subscriber.on('ready', () => {
      if (connected) this.#tell();
      connected = true;
    });
    this.#subscriber = subscriber;
    await this.#conn.subscribeAtStart(subscriber, this.#conn.names.planChanges, deadline);
  }

  /** Unsubscribes. */
  async stop(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    if (subscriber !== undefined) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  watch(listener: PlanChangeListener): () => void {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  #tell(): void {
    for (const listener of this.#listeners) listener();
  }

  async insert(plan: StoredPlan): Promise<boolean> {
    const inserted = (await this.#conn.client.hsetnx(this.#conn.names.plans, plan.name, valueOf(plan))) === 1;
    if (inserted) await this.#announce();
    return inserted;
  }

  async get(name: string): Promise<StoredPlan | undefined> {
    const json = await this.#conn.client.hget(this.#conn.names.plans, name);
    return json === null ? undefined : planOf(name, json);
  }

  async list(): Promise<StoredPlan[]> {
    const fields = await this.#conn.client.hgetall(this.#conn.names.plans);
    return Object.keys(fields).sort().map((name) => planOf(name, fields[name]!));
  }

  async update(name: string, changes: PlanChanges, now: number): Promise<StoredPlan | undefined> {
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const read = await this.#conn.client.hget(this.#conn.names.plans, name);
      if (read === null) return undefined;
      const updated: StoredPlan = { ...planOf(name, read), ...definedOf(changes), updatedAt: now };
      if ((await this.#conn.client.tgReplacePlan(this.#conn.names.plans, name, read, valueOf(updated))) === 1) {
        await this.#announce();
        return updated;
      }
    }
    throw new Error(`plan "${name}" kept changing while it was updated; try again`);
  }

  async delete(name: string): Promise<boolean> {
    const deleted = (await this.#conn.client.hdel(this.#conn.names.plans, name)) === 1;
    if (deleted) await this.#announce();
    return deleted;
  }

  async #announce(): Promise<void> {
    await this.#conn.client.publish(this.#conn.names.planChanges, '1');
  }
}
