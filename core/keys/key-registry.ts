import { createHash } from 'node:crypto';
import type { InjectionToken } from 'tsyringe';
import type { MaybePromise } from '../util/maybe-promise.js';
import type { ApiKeyRecord, KeyChangeListener, KeyStore } from '../contracts/keys.js';

/**
 * A key as a {@link KeyRegistry} keeps it: never the API key or its secret, only their hashes (the API
 * key's SHA-256, to look it up on every call; the secret's scrypt hash, to check it).
 */
export interface StoredKey {
  /** Stable, loggable id of the key. */
  readonly id: string;
  /** Name of the key's plan. */
  readonly plan: string;
  /** A note for operators (customer, purpose). */
  readonly label?: string | undefined;
  /** SHA-256 of the API key, lower-case hex (see {@link apiKeyHash}). */
  readonly keyHash: string;
  /** The API key's last four characters, so that an operator can tell keys apart. */
  readonly keyHint: string;
  /** scrypt hash of the key's secret (`scrypt$salt$hash`). */
  readonly secretHash?: string | undefined;
  /** Free-form settings plugins may read (allowlists, for example). */
  readonly settings?: Readonly<Record<string, unknown>> | undefined;
  /** When the key was created (ms since epoch). */
  readonly createdAt: number;
  /** When the key was last changed (ms since epoch). */
  readonly updatedAt: number;
  /** When the key was revoked (ms since epoch); a revoked key is refused like an unknown one. */
  readonly revokedAt?: number | undefined;
}

/** What {@link KeyRegistry.update} may change; absent fields stay as they are. */
export interface KeyChanges {
  /** A new plan. */
  readonly plan?: string;
  /** A new label. */
  readonly label?: string;
  /** A new API key hash (rotation); the previous API key stops working. */
  readonly keyHash?: string;
  /** The new API key's hint. */
  readonly keyHint?: string;
  /** A new secret hash (rotation). */
  readonly secretHash?: string;
  /** New settings, replacing the old ones. */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** Revocation time. */
  readonly revokedAt?: number;
}

/**
 * A {@link KeyStore} whose keys operators manage at run time (create, list, rotate, revoke, assign plans),
 * implemented by the durable store plugins. It stores hashes only, so a copy of the store gives nobody a
 * working key.
 */
export interface KeyRegistry extends KeyStore {
  /** Adds a key. Resolves false, changing nothing, when a key with the same id or hash exists. */
  insert(key: StoredKey): MaybePromise<boolean>;
  /** The key with id `id`. */
  get(id: string): MaybePromise<StoredKey | undefined>;
  /** Every key, revoked ones included, ordered by id. */
  list(): MaybePromise<StoredKey[]>;
  /** Changes a key and stamps `updatedAt` with `now`; resolves the changed key, or undefined when there is none. */
  update(id: string, changes: KeyChanges, now: number): MaybePromise<StoredKey | undefined>;
}

/**
 * The injection token of the gateway's {@link KeyRegistry}, registered by store plugins that keep keys
 * and read by key-management plugins. Absent when the gateway only knows the config's keys.
 */
export const KeyRegistryToken = Symbol.for('tollgate.KeyRegistry') as InjectionToken<KeyRegistry>;

/** SHA-256 of an API key, lower-case hex: how registries look keys up without storing them. */
export function apiKeyHash(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

/** The record the pipeline sees for a stored key. */
export function recordOf(key: StoredKey): ApiKeyRecord {
  return {
    id: key.id,
    plan: key.plan,
    ...(key.secretHash === undefined ? {} : { secretHash: key.secretHash }),
    ...(key.revokedAt === undefined ? {} : { revoked: true }),
    ...(key.settings === undefined ? {} : { settings: key.settings }),
  };
}

/**
 * Looks a key up in `first` (the config's keys: a map, answered synchronously), then in `then` (a
 * registry). Keeps synchronous answers synchronous.
 */
export class LayeredKeyStore implements KeyStore {
  readonly #first: KeyStore;
  readonly #then: KeyStore;

  constructor(first: KeyStore, then: KeyStore) {
    this.#first = first;
    this.#then = then;
  }

  find(apiKey: string): MaybePromise<ApiKeyRecord | undefined> {
    const found = this.#first.find(apiKey);
    if (found instanceof Promise) return found.then((record) => record ?? this.#then.find(apiKey));
    return found ?? this.#then.find(apiKey);
  }

  watch(listener: KeyChangeListener): () => void {
    const stops = [this.#first.watch?.(listener), this.#then.watch?.(listener)];
    return () => { for (const stop of stops) stop?.(); };
  }
}
