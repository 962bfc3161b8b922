import type { PinAddResult, PinRecord, PinSettlement, PinSettleResult, PinStore } from './pin-store.js';

/**
 * The {@link PinStore} of one process: pins in a map per key, and the keys of each CID. The default; a
 * deployment of several workers or instances uses a store plugin's.
 */
export class MemoryPinStore implements PinStore {
  readonly #byKey = new Map<string, Map<string, PinRecord>>();
  readonly #keysOfCid = new Map<string, Set<string>>();

  #total(keyId: string): number {
    let total = 0;
    for (const pin of this.#byKey.get(keyId)?.values() ?? []) total += pin.bytes;
    return total;
  }

  /** See {@link PinStore.add}. */
  add(pin: PinRecord, limitBytes: number | undefined): PinAddResult {
    const total = this.#total(pin.keyId);
    let pins = this.#byKey.get(pin.keyId);
    if (pins?.has(pin.cid) === true) return { ok: true, added: false, storedBytes: total };
    if (limitBytes !== undefined && total + pin.bytes > limitBytes) return { ok: false, storedBytes: total };
    if (pins === undefined) this.#byKey.set(pin.keyId, (pins = new Map()));
    pins.set(pin.cid, { ...pin });
    let keys = this.#keysOfCid.get(pin.cid);
    if (keys === undefined) this.#keysOfCid.set(pin.cid, (keys = new Set()));
    keys.add(pin.keyId);
    return { ok: true, added: true, storedBytes: total + pin.bytes };
  }

  /** See {@link PinStore.remove}. */
  remove(keyId: string, cid: string): PinRecord | undefined {
    const pins = this.#byKey.get(keyId);
    const pin = pins?.get(cid);
    if (pin === undefined) return undefined;
    pins!.delete(cid);
    const keys = this.#keysOfCid.get(cid);
    keys?.delete(keyId);
    if (keys?.size === 0) this.#keysOfCid.delete(cid);
    return pin;
  }

  /** See {@link PinStore.get}. */
  get(keyId: string, cid: string): PinRecord | undefined {
    return this.#byKey.get(keyId)?.get(cid);
  }

  /** See {@link PinStore.list}. */
  list(keyId: string): PinRecord[] {
    // Maps keep insertion order: oldest first.
    return [...(this.#byKey.get(keyId)?.values() ?? [])];
  }

  /** See {@link PinStore.pinnedByOthers}. */
  pinnedByOthers(keyId: string, cid: string): boolean {
    for (const key of this.#keysOfCid.get(cid) ?? []) if (key !== keyId && this.#byKey.get(key)?.get(cid)?.status !== 'failed') return true;
    return false;
  }

  /** See {@link PinStore.storedBytes}. */
  storedBytes(keyId: string): number {
    return this.#total(keyId);
  }

  /** See {@link PinStore.byRequest}. */
  byRequest(keyId: string, requestId: string): PinRecord | undefined {
    for (const pin of this.#byKey.get(keyId)?.values() ?? []) if (pin.requestId === requestId) return pin;
    return undefined;
  }

  /** See {@link PinStore.settle}. */
  settle(keyId: string, cid: string, settlement: PinSettlement, limitBytes: number | undefined): PinSettleResult {
    const total = this.#total(keyId);
    const pins = this.#byKey.get(keyId);
    const pin = pins?.get(cid);
    if (pin === undefined) return { ok: false, storedBytes: total, missing: true };
    const bytes = settlement.bytes ?? pin.bytes;
    if (limitBytes !== undefined && bytes > pin.bytes && total - pin.bytes + bytes > limitBytes) return { ok: false, storedBytes: total };
    const { statusDetails: _dropped, ...rest } = pin;
    pins!.set(cid, { ...rest, bytes, status: settlement.status, ...(settlement.statusDetails === undefined ? {} : { statusDetails: settlement.statusDetails }) });
    return { ok: true, storedBytes: total - pin.bytes + bytes };
  }
}
