import { pinIdOf, type PinAddResult, type PinRecord, type PinSettlement, type PinSettleResult, type PinStore } from '../contracts/pin-store.js';

function holds(pin: PinRecord): boolean {
  return pin.status !== 'failed';
}

/**
 * The {@link PinStore} of one process: pins in a map per key (by {@link pinIdOf}), and the keys of each
 * CID. The default; a deployment of several workers or instances uses a store plugin's.
 */
export class MemoryPinStore implements PinStore {
  readonly #byKey = new Map<string, Map<string, PinRecord>>();
  readonly #keysOfCid = new Map<string, Set<string>>();

  /** The key's stored bytes: each CID once, at its heaviest pin. */
  #total(keyId: string): number {
    const weights = new Map<string, number>();
    for (const pin of this.#byKey.get(keyId)?.values() ?? []) weights.set(pin.cid, Math.max(weights.get(pin.cid) ?? 0, pin.bytes));
    let total = 0;
    for (const bytes of weights.values()) total += bytes;
    return total;
  }

  /** The weight of `cid` for the key, leaving out the pin `except`. */
  #weight(keyId: string, cid: string, except?: string): number {
    let weight = 0;
    for (const [id, pin] of this.#byKey.get(keyId) ?? []) if (pin.cid === cid && id !== except) weight = Math.max(weight, pin.bytes);
    return weight;
  }

  #index(keyId: string, cid: string): void {
    const held = this.pinsOf(keyId, cid).some(holds);
    let keys = this.#keysOfCid.get(cid);
    if (held) {
      if (keys === undefined) this.#keysOfCid.set(cid, (keys = new Set()));
      keys.add(keyId);
    } else {
      keys?.delete(keyId);
      if (keys?.size === 0) this.#keysOfCid.delete(cid);
    }
  }

  /** See {@link PinStore.add}. */
  add(pin: PinRecord, limitBytes: number | undefined): PinAddResult {
    const total = this.#total(pin.keyId);
    let pins = this.#byKey.get(pin.keyId);
    const id = pinIdOf(pin);
    if (pins?.has(id) === true) return { ok: true, added: false, storedBytes: total };
    const grows = Math.max(0, pin.bytes - this.#weight(pin.keyId, pin.cid));
    if (limitBytes !== undefined && total + grows > limitBytes) return { ok: false, storedBytes: total };
    if (pins === undefined) this.#byKey.set(pin.keyId, (pins = new Map()));
    pins.set(id, { ...pin });
    this.#index(pin.keyId, pin.cid);
    return { ok: true, added: true, storedBytes: total + grows };
  }

  /** See {@link PinStore.remove}. */
  remove(keyId: string, pinId: string): PinRecord | undefined {
    const pins = this.#byKey.get(keyId);
    const pin = pins?.get(pinId);
    if (pin === undefined) return undefined;
    pins!.delete(pinId);
    this.#index(keyId, pin.cid);
    return pin;
  }

  /** See {@link PinStore.get}. */
  get(keyId: string, pinId: string): PinRecord | undefined {
    return this.#byKey.get(keyId)?.get(pinId);
  }

  /** See {@link PinStore.pinsOf}. */
  pinsOf(keyId: string, cid: string): PinRecord[] {
    return this.list(keyId).filter((pin) => pin.cid === cid);
  }

  /** See {@link PinStore.list}. */
  list(keyId: string): PinRecord[] {
    // Maps keep insertion order: oldest first.
    return [...(this.#byKey.get(keyId)?.values() ?? [])];
  }

  /** See {@link PinStore.pinnedByOthers}. */
  pinnedByOthers(keyId: string, cid: string): boolean {
    for (const key of this.#keysOfCid.get(cid) ?? []) if (key !== keyId) return true;
    return false;
  }

  /** See {@link PinStore.storedBytes}. */
  storedBytes(keyId: string): number {
    return this.#total(keyId);
  }

  /** See {@link PinStore.settle}. */
  settle(keyId: string, pinId: string, settlement: PinSettlement, limitBytes: number | undefined): PinSettleResult {
    const total = this.#total(keyId);
    const pins = this.#byKey.get(keyId);
    const pin = pins?.get(pinId);
    if (pin === undefined) return { ok: false, storedBytes: total, missing: true };
    if (settlement.from !== undefined && !settlement.from.includes(pin.status ?? 'pinned')) return { ok: false, storedBytes: total, moved: true };
    const bytes = settlement.bytes ?? pin.bytes;
    const others = this.#weight(keyId, pin.cid, pinId);
    const grows = Math.max(others, bytes) - Math.max(others, pin.bytes);
    if (limitBytes !== undefined && grows > 0 && total + grows > limitBytes) return { ok: false, storedBytes: total };
    const { statusDetails: _dropped, ...rest } = pin;
    pins!.set(pinId, { ...rest, bytes, status: settlement.status, ...(settlement.statusDetails === undefined ? {} : { statusDetails: settlement.statusDetails }) });
    this.#index(keyId, pin.cid);
    return { ok: true, storedBytes: total + grows };
  }

}
