import type { MaybePromise } from '../util/maybe-promise.js';

/**
 * One pin as a {@link PinStore} keeps it: content (named by its CID) that an API key asked the gateway to
 * keep, and what it weighs against the key's storage allowance.
 */
export interface PinRecord {
  /** The id of the key that owns the pin. */
  readonly keyId: string;
  /** The pinned content's CID, as the node names it (its string form). */
  readonly cid: string;
  /** A name the key gave it, if any. */
  readonly name?: string;
  /** Bytes the pinned content takes on the node (the DAG's size), counted against the key's allowance. */
  readonly bytes: number;
  /** When the key pinned it (ms since epoch, gateway clock). */
  readonly createdAt: number;
  /**
   * The id of the pin request that made it, for a pin made through the Pinning Service API (absent for
   * the file API's pins, which that API names by their CID).
   */
  readonly requestId?: string;
  /** Where the pinning stands; absent: `pinned` (the file API records a pin once the node holds it). */
  readonly status?: PinStatusName;
  /** Why a pin `failed`, for its holder. */
  readonly statusDetails?: string;
  /** The client's metadata of the pin (Pinning Service API `Pin.meta`). */
  readonly meta?: Readonly<Record<string, string>>;
  /** Multiaddrs the client said provide the content (Pinning Service API `Pin.origins`). */
  readonly origins?: readonly string[];
}

/** The states of a pin: waiting, being fetched by the node, held by it, or given up. */
export type PinStatusName = 'queued' | 'pinning' | 'pinned' | 'failed';

/** What {@link PinStore.settle} changes in a pin: its state and, once the node holds it, its weight. */
export interface PinSettlement {
  /** The new state. */
  readonly status: PinStatusName;
  /** The pin's bytes, once known (weighed against the allowance when they grow). */
  readonly bytes?: number;
  /** Why it failed. */
  readonly statusDetails?: string;
}

/** What {@link PinStore.settle} did. */
export type PinSettleResult =
  /** Changed. */
  | {
      /** Taken. */
      readonly ok: true;
      /** The key's total stored bytes after it. */
      readonly storedBytes: number;
    }
  /** Refused (the new bytes would pass the limit: nothing changed), or the key has no such pin (`missing`). */
  | {
      /** Not changed. */
      readonly ok: false;
      /** The key's total stored bytes (unchanged). */
      readonly storedBytes: number;
      /** Set when the key has no such pin. */
      readonly missing?: true;
    };

/** What {@link PinStore.add} did. */
export type PinAddResult =
  /** Recorded, or already the key's pin (the record is then unchanged). */
  | {
      /** Taken. */
      readonly ok: true;
      /** Whether the pin is new (false: the key already pinned the CID). */
      readonly added: boolean;
      /** The key's total stored bytes after it. */
      readonly storedBytes: number;
    }
  /** Refused: the key's stored bytes plus the pin's would pass the limit. */
  | {
      /** Refused. */
      readonly ok: false;
      /** The key's total stored bytes (unchanged). */
      readonly storedBytes: number;
    };

/**
 * The pins of every API key, kept where every worker and instance of a deployment sees them, so that each
 * key sees and removes only its own pins, a node keeps content while any key pins it, and a key's stored
 * bytes are bounded by its plan across the whole fleet. The store does not talk to nodes: the family that
 * serves pins records here what it pinned there.
 *
 * The core keeps them in memory (one process); store plugins share them (SQLite between the workers of
 * one machine, Redis between instances).
 */
export interface PinStore {
  /**
   * Records `pin` as its key's, unless the key's total stored bytes plus `pin.bytes` would pass
   * `limitBytes` (undefined: no limit). Check and record are one atomic step, so two uploads racing
   * for the last bytes of an allowance cannot both pass. A pin the key already holds is left as it is.
   */
  add(pin: PinRecord, limitBytes: number | undefined): MaybePromise<PinAddResult>;
  /** Removes `keyId`'s pin of `cid` and returns it; undefined when the key has none (another key's pin is never touched). */
  remove(keyId: string, cid: string): MaybePromise<PinRecord | undefined>;
  /** `keyId`'s pin of `cid`, if it has one. */
  get(keyId: string, cid: string): MaybePromise<PinRecord | undefined>;
  /** Every pin of `keyId`, oldest first. */
  list(keyId: string): MaybePromise<PinRecord[]>;
  /** Whether a key other than `keyId` pins `cid` (then the node must keep the content); a `failed` pin holds nothing. */
  pinnedByOthers(keyId: string, cid: string): MaybePromise<boolean>;
  /** The total bytes of `keyId`'s pins. */
  storedBytes(keyId: string): MaybePromise<number>;
  /** `keyId`'s pin made by the pin request `requestId`, if it has one. */
  byRequest(keyId: string, requestId: string): MaybePromise<PinRecord | undefined>;
  /**
   * Moves `keyId`'s pin of `cid` to another state (a pin request as the node works on it) and, given
   * `bytes`, sets its weight: bytes that grow the key's total past `limitBytes` refuse the change, in
   * the same atomic step as {@link add}.
   */
  settle(keyId: string, cid: string, settlement: PinSettlement, limitBytes: number | undefined): MaybePromise<PinSettleResult>;
}
