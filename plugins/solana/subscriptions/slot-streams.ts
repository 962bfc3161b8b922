/**
 * Where the slot-ordered Solana streams say their slot, and how a move fills their gap.
 *
 * @module
 */
import type { StreamAsk } from '../../../core/family-api.js';
import { slotsAfter, type SlotStream } from './ordered-slots.js';

/** A slot notification's result. */
interface SlotInfo {
  readonly parent: number;
  readonly root: number;
  readonly slot: number;
}

const number = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined);

/**
 * `slotNotification`: `{parent, root, slot}`. A move fills the slots up to the new node's processed slot,
 * each with the slot before it as parent and the node's finalized slot as root (capped at the slot).
 */
export const SLOT_STREAM: SlotStream = {
  slotOf: (event) => number((event as SlotInfo | null)?.slot),
  async fill(last: number, ask: StreamAsk): Promise<readonly SlotInfo[]> {
    const [to, root] = await Promise.all([ask('getSlot', [{ commitment: 'processed' }]), ask('getSlot', [{ commitment: 'finalized' }])]);
    return slotsAfter(last, number(to) ?? last).map((slot) => ({ parent: slot - 1, root: Math.min(number(root) ?? 0, slot), slot }));
  },
};

/** `rootNotification`: a slot number. A move fills the slots up to the new node's finalized slot. */
export const ROOT_STREAM: SlotStream = {
  slotOf: number,
  async fill(last: number, ask: StreamAsk): Promise<readonly number[]> {
    return slotsAfter(last, number(await ask('getSlot', [{ commitment: 'finalized' }])) ?? last);
  },
};

/** A block notification's result. */
interface BlockEvent {
  readonly context?: { readonly slot?: number };
  readonly value?: { readonly slot?: number };
}

/**
 * `blockNotification`: `{context: {slot}, value: {slot, block, err}}`. A move of an `"all"` stream fills
 * the blocks the new node holds after the last delivered (`getBlocks`, then `getBlock` with the stream's
 * own config); a stream filtered by address fills nothing (which blocks mention it is the node's to say).
 */
export function blockStream(filter: unknown, config: Readonly<Record<string, unknown>>): SlotStream {
  return {
    slotOf: (event) => number((event as BlockEvent | null)?.value?.slot ?? (event as BlockEvent | null)?.context?.slot),
    fill: filter !== 'all' ? undefined : async (last, ask) => {
      const commitment = config.commitment === 'processed' ? 'confirmed' : config.commitment ?? 'finalized';
      const to = number(await ask('getSlot', [{ commitment }])) ?? last;
      const slots = slotsAfter(last, to);
      if (slots.length === 0) return [];
      const held = (await ask('getBlocks', [slots[0], slots[slots.length - 1], { commitment }])) as number[];
      const blocks = await Promise.all(held.map((slot) => ask('getBlock', [slot, { ...config, commitment }])));
      return held.map((slot, i) => ({ context: { slot }, value: { slot, block: blocks[i] ?? null, err: null } }));
    },
  };
}
