import type { MaybePromise } from '../util/maybe-promise.js';

/**
 * One pin as a {@link PinStore} keeps it: content (named by its CID) that an API key asked the gateway to
 * keep, and what it weighs against the key's storage allowance. A key may hold several pins of one CID
 * (the file API's, and each Pinning Service API request for it); each is named among the key's pins by
 * {@link pinIdOf}.
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

/**
 * A pin's name among its key's pins: its pin request's id, or, for a pin the file API made (one per key
 * and CID), its CID.
 */
export function pinIdOf(pin: Pick<PinRecord, 'cid' | 'requestId'>): string {
  return pin.requestId ?? pin.cid;
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
  /**
   * The states the pin may be in for the change to be made (a compare-and-set, so two gateways working on
   * one pin request cannot both move it: the second finds it moved); absent: any.
   */
  readonly from?: readonly PinStatusName[];
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
  /**
   * Refused (the new bytes would pass the limit: nothing changed), or the key has no such pin (`missing`),
   * or the pin is in none of the settlement's `from` states (`moved`).
   */
  | {
      /** Not changed. */
      readonly ok: false;
      /** The key's total stored bytes (unchanged). */
      readonly storedBytes: number;
      /** Set when the key has no such pin. */
      readonly missing?: true;
      /** Set when the pin is not in a state the settlement's `from` allows. */
      readonly moved?: true;
    };

/** What {@link PinStore.add} did. */
export type PinAddResult =
  /** Recorded, or already the key's pin (the record is then unchanged). */
  | {
      /** Taken. */
      readonly ok: true;
      /** Whether the pin is new (false: the key already has a pin of that {@link pinIdOf}). */
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
 * A key's pins are named by {@link pinIdOf}: a key may hold one CID through several pins (the file API's
 * pin and Pinning Service API requests, each request its own). The node stores the content once, so a
 * key's stored bytes count each CID once, at the largest weight any of the key's pins of it has.
 *
 * The core keeps them in memory (one process); store plugins share them (SQLite between the workers of
 * one machine, Redis between instances).
 */
export interface PinStore {
  /**
   * Records `pin` as its key's, unless the key's stored bytes would pass `limitBytes` (undefined: no
   * limit) by what the pin adds to them (nothing when the key already holds its CID at that weight).
   * Check and record are one atomic step, so two uploads racing for the last bytes of an allowance
   * cannot both pass. A pin whose {@link pinIdOf} the key already has is left as it is.
   */
  add(pin: PinRecord, limitBytes: number | undefined): MaybePromise<PinAddResult>;
  /** Removes `keyId`'s pin `pinId` (see {@link pinIdOf}) and returns it; undefined when the key has none (another key's pin is never touched). */
  remove(keyId: string, pinId: string): MaybePromise<PinRecord | undefined>;
  /** `keyId`'s pin `pinId` (a request id, or the CID of the file API's pin), if it has one. */
  get(keyId: string, pinId: string): MaybePromise<PinRecord | undefined>;
  /** Every pin of `keyId` of `cid` (the file API's and each pin request), oldest first. */
  pinsOf(keyId: string, cid: string): MaybePromise<PinRecord[]>;
  /** Every pin of `keyId`, oldest first. */
  list(keyId: string): MaybePromise<PinRecord[]>;
  /** Whether a key other than `keyId` pins `cid` (then the node must keep the content); a `failed` pin holds nothing. */
  pinnedByOthers(keyId: string, cid: string): MaybePromise<boolean>;
  /** The bytes `keyId` keeps pinned: each CID once, at its largest pin's weight. */
  storedBytes(keyId: string): MaybePromise<number>;
  /**
   * Moves `keyId`'s pin `pinId` to another state (a pin request as the node works on it), only from the
   * settlement's `from` states when it names some, and, given `bytes`, sets its weight: bytes that grow
   * the key's stored bytes past `limitBytes` refuse the change, in the same atomic step as {@link add}.
   */
  settle(keyId: string, pinId: string, settlement: PinSettlement, limitBytes: number | undefined): MaybePromise<PinSettleResult>;
}
