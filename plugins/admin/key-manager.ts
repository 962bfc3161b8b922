import { randomBytes } from 'node:crypto';
import {
  apiKeyHash,
  hashSecret,
  utcDay,
  type CreditLedger,
  type KeyRegistry,
  type PlanRegistry,
  type StoredKey,
  type UsageRecorder,
  type UsageTotals,
  type PinRecord,
  type PinStore,
} from '../../core/store-api.js';
import {
  keyIdOf,
  type GatewayConfig,
  type KeySettingsSection,
} from '../../core/plugin-api.js';
import type { KeyTraffic, TrafficRecorder } from './traffic-recorder.js';
import { PlanManager } from './plan-manager.js';
import { KeyManagerError, storeOperation } from './manager-error.js';

export { KeyManagerError } from './manager-error.js';

/** A key as operators see it: never the API key, its secret, or their hashes. */
export interface KeyView {
  /** The key's id. */
  readonly id: string;
  /** Its plan. */
  readonly plan: string;
  /** Its label, if any. */
  readonly label?: string;
  /** The API key's last four characters (`…ab12`); empty for keys of the config. */
  readonly keyHint: string;
  /** Whether the key has a secret (for APIs that take one). */
  readonly hasSecret: boolean;
  /** `store` for managed keys; `config` for keys of the config file, which only the file changes. */
  readonly source: 'store' | 'config';
  /** Creation time (ISO 8601), for managed keys. */
  readonly createdAt?: string;
  /** Last change (ISO 8601), for managed keys. */
  readonly updatedAt?: string;
  /** Revocation time (ISO 8601), when revoked. */
  readonly revokedAt?: string;
  /** Settings plugins read, if any. */
  readonly settings?: Readonly<Record<string, unknown>>;
}

/** A key just created or rotated: the only time its API key and secret are shown. */
export interface IssuedKey {
  /** The key. */
  readonly key: KeyView;
  /** The API key clients put in the URL. Shown once; only its hash is kept. */
  readonly apiKey: string;
  /** The key's secret (HTTP basic password of APIs that take one). Shown once; only its scrypt hash is kept. */
  readonly secret: string;
}

/** One day of a key's usage. */
export interface DayUsage {
  /** The UTC day. */
  readonly day: string;
  /** Credits the key's balance spent that day. */
  readonly balanceUsed: number;
  /** Totals per method. */
  readonly methods: Record<string, UsageTotals>;
  /** Totals over all methods. */
  readonly total: UsageTotals;
}

/** A key's balance today, and its paid balance. */
export interface KeyBalance {
  /** The UTC day. */
  readonly day: string;
  /** The plan's daily credits. */
  readonly dailyCredits: number;
  /** Credits spent today. */
  readonly used: number;
  /** Credits left today. */
  readonly remaining: number;
  /** Paid credits left (bought or topped up; used once the day's are spent, never reset). */
  readonly paidRemaining: number;
  /** When the day's balance resets (ISO 8601, the next 00:00 UTC). */
  readonly resetsAt: string;
}

/** The outcome of {@link KeyManager.topUp}. */
export interface KeyTopUp {
  /** False when a top-up with that id was applied before (nothing changed). */
  readonly applied: boolean;
  /** The key's balance after it. */
  readonly balance: KeyBalance;
}

/** Longest top-up id {@link KeyManager.topUp} accepts. */
const MAX_TOP_UP_ID = 128;

/** What a key keeps pinned (the file-storage API's pins). */
export interface KeyStorage {
  /** The bytes of its pins (each CID once), what its plan's `storageBytes` bounds. */
  readonly bytes: number;
  /** How many pins it has. */
  readonly pins: number;
  /** Its plan's `storageBytes`, the most it may keep pinned; absent when the plan sets no limit. */
  readonly limitBytes?: number;
}

/** What a {@link KeyManager} works with. */
export interface KeyManagerDeps {
  /** The resolved config: its plans, and its keys (listed, read-only). */
  readonly config: GatewayConfig;
  /** Where managed keys live; without one, only the config's keys are listed. */
  readonly registry: KeyRegistry | undefined;
  /** Where managed plans live, which keys may be put on besides the config's plans. */
  readonly plans?: PlanRegistry | undefined;
  /** Balances. */
  readonly ledger: CreditLedger;
  /** Usage. */
  readonly usage: UsageRecorder;
  /** Time (ms since epoch). */
  readonly now: () => number;
  /** Counts of calls by network and outcome (the admin plugin's, in a running gateway). */
  readonly traffic?: TrafficRecorder;
  /** The settings sections plugins own, checked before a key's settings are stored. */
  readonly sections?: readonly KeySettingsSection[];
  /** The pins of the file-storage API; without it, keys show no storage. */
  readonly pins?: PinStore;
  /** Each plan's `storageBytes` of the file-storage API (undefined: no limit); without it, keys show no limit. */
  readonly storageBytes?: (plan: string) => number | undefined;
}

/** Ids of managed keys: letters, digits, `.`, `_` and `-`, at most 64. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Longest usage range one request may ask for, in days. */
export const MAX_USAGE_DAYS = 92;
const DAY_MS = 86_400_000;
const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

function iso(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/**
 * Key and usage operations shared by the admin API and the example gateway's CLI: creates keys with a
 * random API key and secret (returned once, stored as hashes), lists, rotates, revokes, assigns plans, and
 * reads usage and balances. Keys of the config file are listed too, read-only.
 */
export class KeyManager {
  readonly #deps: KeyManagerDeps;
  readonly #plans: PlanManager;

  constructor(deps: KeyManagerDeps) {
    this.#deps = deps;
    this.#plans = new PlanManager({ config: deps.config, plans: deps.plans, keys: deps.registry, now: deps.now });
  }

  /** Every key: the config's, then the managed ones, by id. */
  async list(): Promise<KeyView[]> {
    const managed = this.#deps.registry === undefined ? [] : await this.#store(() => this.#deps.registry!.list());
    return [...this.#configKeys(), ...managed.map((k) => this.#view(k))];
  }

  /**
   * One key.
   *
   * @throws KeyManagerError `not_found`.
   */
  async get(id: string): Promise<KeyView> {
    const fromConfig = this.#configKeys().find((k) => k.id === id);
    if (fromConfig !== undefined) return fromConfig;
    return this.#view(await this.#managed(id));
  }

  /**
   * Creates a key on `plan`, with a random API key and secret.
   *
   * @throws KeyManagerError `bad_request` (unknown plan, bad id) or `conflict` (the id exists).
   */
  async create(input: { plan: string; id?: string; label?: string; settings?: Record<string, unknown> }): Promise<IssuedKey> {
    const registry = this.#registry();
    await this.#checkPlan(input.plan);
    this.#checkSettings(input.settings);
    const id = input.id ?? `key_${randomBytes(6).toString('hex')}`;
    if (!KEY_ID_PATTERN.test(id)) throw new KeyManagerError('bad_request', `id: must match ${KEY_ID_PATTERN} (got "${id}")`);
    if (this.#configKeys().some((k) => k.id === id)) throw new KeyManagerError('conflict', `a key of the config file already has id "${id}"`);
    const { apiKey, secret, keyHash, keyHint, secretHash } = await this.#credentials();
    const now = this.#deps.now();
    const key: StoredKey = { id, plan: input.plan, label: input.label, keyHash, keyHint, secretHash, settings: input.settings, createdAt: now, updatedAt: now };
    if (!(await this.#store(() => registry.insert(key)))) throw new KeyManagerError('conflict', `a key with id "${id}" exists`);
    return { key: this.#view(key), apiKey, secret };
  }

  /**
   * Gives a key a new API key and secret; the old ones stop working at once. Balance and usage stay.
   *
   * @throws KeyManagerError `not_found`, `read_only` or `conflict` (revoked).
   */
  async rotate(id: string): Promise<IssuedKey> {
    const current = await this.#managed(id);
    if (current.revokedAt !== undefined) throw new KeyManagerError('conflict', `key "${id}" is revoked; create a new key instead`);
    const { apiKey, secret, keyHash, keyHint, secretHash } = await this.#credentials();
    const updated = await this.#store(() => this.#registry().update(id, { keyHash, keyHint, secretHash }, this.#deps.now()));
    if (updated === undefined) throw new KeyManagerError('not_found', `no key "${id}"`);
    return { key: this.#view(updated), apiKey, secret };
  }

  /**
   * Revokes a key: it is refused like an unknown one from the next call on. Its usage stays readable.
   *
   * @throws KeyManagerError `not_found` or `read_only`.
   */
  async revoke(id: string): Promise<KeyView> {
    const current = await this.#managed(id);
    if (current.revokedAt !== undefined) return this.#view(current);
    const updated = await this.#store(() => this.#registry().update(id, { revokedAt: this.#deps.now() }, this.#deps.now()));
    if (updated === undefined) throw new KeyManagerError('not_found', `no key "${id}"`);
    return this.#view(updated);
  }

  /**
   * Changes a key's plan, label or settings.
   *
   * @throws KeyManagerError `not_found`, `read_only` or `bad_request`.
   */
  async update(id: string, changes: { plan?: string; label?: string; settings?: Record<string, unknown> }): Promise<KeyView> {
    await this.#managed(id);
    if (changes.plan !== undefined) await this.#checkPlan(changes.plan);
    this.#checkSettings(changes.settings);
    const updated = await this.#store(() => this.#registry().update(id, changes, this.#deps.now()));
    if (updated === undefined) throw new KeyManagerError('not_found', `no key "${id}"`);
    return this.#view(updated);
  }

  /**
   * A key's usage per day and method, from `from` to `to` (UTC days, `YYYY-MM-DD`; default: today).
   *
   * @throws KeyManagerError `not_found` or `bad_request` (bad days, a range over {@link MAX_USAGE_DAYS}).
   */
  async usage(id: string, range: { from?: string; to?: string } = {}): Promise<DayUsage[]> {
    await this.get(id);
    const { start, end } = this.#range(range);
    const out: DayUsage[] = [];
    for (let at = start; at <= end; at += DAY_MS) {
      const day = utcDay(new Date(at));
      const methods = (await this.#store(async () => this.#deps.usage.usage?.(id, day))) ?? {};
      const balance = await this.#store(async () => this.#deps.ledger.balance(id, Number.MAX_SAFE_INTEGER, new Date(at + DAY_MS / 2)));
      const total: UsageTotals = { calls: 0, credits: 0, bytes: 0, failed: 0 };
      for (const t of Object.values(methods)) {
        total.calls += t.calls;
        total.credits += t.credits;
        total.bytes += t.bytes;
        total.failed += t.failed;
        if (t.cacheHits !== undefined) total.cacheHits = (total.cacheHits ?? 0) + t.cacheHits;
        if (t.cacheMisses !== undefined) total.cacheMisses = (total.cacheMisses ?? 0) + t.cacheMisses;
      }
      out.push({ day, balanceUsed: balance.used, methods, total });
    }
    return out;
  }

  /** Today's balance of a key on its plan. */
  async balance(id: string): Promise<KeyBalance> {
    const key = await this.get(id);
    const dailyCredits = await this.#plans.dailyCredits(key.plan);
    const balance = await this.#store(async () => this.#deps.ledger.balance(id, dailyCredits, new Date(this.#deps.now())));
    return { day: balance.day, dailyCredits, used: balance.used, remaining: balance.remaining, paidRemaining: balance.paidRemaining, resetsAt: balance.resetsAt.toISOString() };
  }

  /**
   * Adds `credits` to a key's paid balance by hand, once per `topUpId` (the operator's reference: the
   * same id again changes nothing, so a retried request never credits twice).
   *
   * @throws KeyManagerError `not_found`, or `bad_request` (credits not a positive integer, a bad id).
   */
  async topUp(id: string, credits: number, topUpId: string): Promise<KeyTopUp> {
    await this.get(id);
    if (!Number.isSafeInteger(credits) || credits <= 0) throw new KeyManagerError('bad_request', `credits: must be a positive integer (got ${String(credits)})`);
    if (topUpId.length === 0 || topUpId.length > MAX_TOP_UP_ID) throw new KeyManagerError('bad_request', `id: must be 1 to ${MAX_TOP_UP_ID} characters`);
    // Apart from payments' ids, which the payments plugin adds under their own.
    const applied = await this.#store(async () => this.#deps.ledger.topUp(id, credits, `admin:${topUpId}`));
    return { applied, balance: await this.balance(id) };
  }

  /** What a key keeps pinned: its pins' total bytes and their count, and its plan's limit when it sets one. */
  async storage(id: string): Promise<KeyStorage> {
    const key = await this.get(id);
    const pins = await this.#pinsOf(id);
    const store = this.#deps.pins;
    // Each CID once, as the allowance counts it (the node stores it once however many pins hold it).
    const bytes = store === undefined ? 0 : await this.#store(async () => store.storedBytes(id));
    const limitBytes = this.#deps.storageBytes?.(key.plan);
    return { bytes, pins: pins.length, ...(limitBytes === undefined ? {} : { limitBytes }) };
  }

  /** A key's pins, oldest first. */
  async pins(id: string): Promise<PinRecord[]> {
    await this.get(id);
    return this.#pinsOf(id);
  }

  async #pinsOf(id: string): Promise<PinRecord[]> {
    const store = this.#deps.pins;
    if (store === undefined) return [];
    return this.#store(async () => store.list(id));
  }

  #configKeys(): KeyView[] {
    return this.#deps.config.keys.map((k) => ({
      id: keyIdOf(k.key, k.id),
      plan: k.plan,
      keyHint: '',
      hasSecret: k.secretHash !== undefined || k.secret !== undefined,
      source: 'config' as const,
      ...(k.settings === undefined ? {} : { settings: k.settings }),
    }));
  }

  #view(key: StoredKey): KeyView {
    return {
      id: key.id,
      plan: key.plan,
      ...(key.label === undefined ? {} : { label: key.label }),
      keyHint: `…${key.keyHint}`,
      hasSecret: key.secretHash !== undefined,
      source: 'store',
      createdAt: iso(key.createdAt)!,
      updatedAt: iso(key.updatedAt)!,
      ...(key.revokedAt === undefined ? {} : { revokedAt: iso(key.revokedAt)! }),
      ...(key.settings === undefined ? {} : { settings: key.settings }),
    };
  }

  /**
   * A key's calls by network and by outcome from `from` to `to` (as {@link KeyManager.usage}), counted
   * by this process since it started.
   *
   * @throws KeyManagerError `not_found`, `bad_request`, or `unavailable` when nothing counts traffic.
   */
  async traffic(id: string, range: { from?: string; to?: string } = {}): Promise<KeyTraffic> {
    await this.get(id);
    if (this.#deps.traffic === undefined) throw new KeyManagerError('unavailable', 'traffic is counted by the admin plugin of a running gateway');
    const { start, end } = this.#range(range);
    return this.#deps.traffic.groupTraffic(id, utcDay(new Date(start)), utcDay(new Date(end)));
  }

  /** Checks a range of UTC days (default: today) and returns its first and last midnight, in ms. */
  #range(range: { from?: string; to?: string }): { start: number; end: number } {
    const today = utcDay(new Date(this.#deps.now()));
    const from = range.from ?? range.to ?? today;
    const to = range.to ?? range.from ?? today;
    for (const [name, day] of [['from', from], ['to', to]] as const) {
      if (!DAY_PATTERN.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) throw new KeyManagerError('bad_request', `${name}: must be a day YYYY-MM-DD (got "${day}")`);
    }
    const start = Date.parse(`${from}T00:00:00Z`);
    const end = Date.parse(`${to}T00:00:00Z`);
    if (end < start) throw new KeyManagerError('bad_request', 'to: must not be before from');
    if ((end - start) / DAY_MS + 1 > MAX_USAGE_DAYS) throw new KeyManagerError('bad_request', `at most ${MAX_USAGE_DAYS} days at once`);
    return { start, end };
  }

  /**
   * One section of a key's settings (`security`...), or undefined when the key has none.
   *
   * @throws KeyManagerError `not_found`.
   */
  async settingsSection(id: string, name: string): Promise<unknown> {
    return (await this.get(id)).settings?.[name];
  }

  /**
   * Replaces one section of a managed key's settings (`undefined` removes it), leaving the others. A
   * section a plugin owns is checked first.
   *
   * @throws KeyManagerError `not_found`, `read_only`, or `bad_request` naming every problem.
   */
  async setSettingsSection(id: string, name: string, value: unknown): Promise<KeyView> {
    const current = await this.#managed(id);
    const settings: Record<string, unknown> = { ...current.settings };
    if (value === undefined) delete settings[name];
    else settings[name] = value;
    return this.update(id, { settings });
  }

  /** The problems of `value` as section `name` of a key's settings (empty when it is fine, or when no plugin owns the section). */
  settingsProblems(name: string, value: unknown): string[] {
    return (this.#deps.sections ?? []).filter((section) => section.name === name).flatMap((section) => section.check(value, `settings.${name}`));
  }

  #checkSettings(settings: Readonly<Record<string, unknown>> | undefined): void {
    if (settings === undefined) return;
    const problems = (this.#deps.sections ?? []).flatMap((section) =>
      settings[section.name] === undefined ? [] : section.check(settings[section.name], `settings.${section.name}`),
    );
    if (problems.length > 0) throw new KeyManagerError('bad_request', problems.join('; '));
  }

  async #managed(id: string): Promise<StoredKey> {
    if (this.#configKeys().some((k) => k.id === id)) throw new KeyManagerError('read_only', `key "${id}" comes from the config file; change it there`);
    const key = this.#deps.registry === undefined ? undefined : await this.#store(() => this.#deps.registry!.get(id));
    if (key === undefined) throw new KeyManagerError('not_found', `no key "${id}"`);
    return key;
  }

  #registry(): KeyRegistry {
    if (this.#deps.registry === undefined) throw new KeyManagerError('read_only', 'this gateway has no key store (only the config file\'s keys): load a store plugin such as ledger-sqlite');
    return this.#deps.registry;
  }

  async #checkPlan(plan: string): Promise<void> {
    if (typeof plan !== 'string' || !(await this.#plans.exists(plan))) {
      const known = (await this.#plans.list()).map((p) => p.name);
      throw new KeyManagerError('bad_request', `plan: unknown plan "${String(plan)}" (known: ${known.join(', ')})`);
    }
  }

  async #credentials(): Promise<{ apiKey: string; secret: string; keyHash: string; keyHint: string; secretHash: string }> {
    const apiKey = `tg_${randomBytes(24).toString('base64url')}`;
    const secret = randomBytes(24).toString('base64url');
    return { apiKey, secret, keyHash: apiKeyHash(apiKey), keyHint: apiKey.slice(-4), secretHash: await hashSecret(secret) };
  }

  /** Runs a store operation; a store that cannot be reached becomes `unavailable`. */
  #store<T>(operation: () => T | Promise<T>): Promise<T> {
    return storeOperation('key store', operation);
  }
}
