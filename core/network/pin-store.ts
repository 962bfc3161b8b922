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
}

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
  /** Whether a key other than `keyId` pins `cid` (then the node must keep the content). */
  pinnedByOthers(keyId: string, cid: string): MaybePromise<boolean>;
  /** The total bytes of `keyId`'s pins. */
  storedBytes(keyId: string): MaybePromise<number>;
}
