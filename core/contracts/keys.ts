import type { MaybePromise } from '../util/maybe-promise.js';

/** A service plan: what a key may spend and do. */
export interface Plan {
  /** Plan name (`core`, `developer`, `growth`, `custom`...). */
  readonly name: string;
  /** Credits the key may spend per UTC day. */
  readonly dailyCredits: number;
  /** Sustained throughput in credits per second (token bucket; bursts up to one second's worth). */
  readonly creditsPerSecond: number;
  /** Whether calls may fail over to a partner provider. */
  readonly failover: boolean;
}

/** An API key as stored: never the raw key in logs, only {@link ApiKeyRecord.id}. */
export interface ApiKeyRecord {
  /** Stable, loggable identifier of the key. */
  readonly id: string;
  /** Name of the key's plan. */
  readonly plan: string;
  /** Hash of the key's secret, for APIs that take one (`scrypt$salt$hash`). */
  readonly secretHash?: string;
  /** A revoked key is refused like an unknown one. */
  readonly revoked?: boolean;
  /** Free-form settings plugins may read (allowlists, for example). */
  readonly settings?: Readonly<Record<string, unknown>>;
}

/**
 * Told which keys changed (revoked, rotated, a new plan or settings), by the SHA-256 of their API keys
 * (see `apiKeyHash`); `undefined` when any key may have changed (changes may have been missed).
 */
export type KeyChangeListener = (keyHashes: readonly string[] | undefined) => void;

/** Looks keys up. Implemented in memory from the config, and by store plugins. */
export interface KeyStore {
  /** The record of `apiKey`, or undefined when there is none. */
  find(apiKey: string): MaybePromise<ApiKeyRecord | undefined>;
  /**
   * Calls `listener` whenever keys change, wherever the change was made (this process, another worker or
   * instance sharing the store), so that what holds a key beyond one call (an open WebSocket) can look it
   * up again. Returns the way to stop listening. Absent for a store whose keys never change.
   */
  watch?(listener: KeyChangeListener): () => void;
}

/** Finds a plan by name, synchronously (the key check runs it on every call). */
export type PlanLookup = (name: string) => Plan | undefined;
