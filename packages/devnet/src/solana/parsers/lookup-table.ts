/**
 * The `address-lookup-table` parser, as agave's `parse_address_lookup_table`.
 *
 * @module
 */
import { ByteReader, NotParsable } from './bytes.js';

/** Size of a lookup table's header; addresses follow it. */
export const LOOKUP_TABLE_META_SIZE = 56;

/** Parses a lookup table: `uninitialized`, or `lookupTable` with its slots, authority and addresses. */
export function parseLookupTable(data: Uint8Array): unknown {
  const r = new ByteReader(data);
  const state = r.u32();
  if (state === 0) return { type: 'uninitialized' };
  if (state !== 1) throw new NotParsable('unknown lookup table state');
  const deactivationSlot = r.u64();
  const lastExtendedSlot = r.u64();
  const lastExtendedSlotStartIndex = r.u8();
  const authority = r.optionPubkey();
  if (data.length < LOOKUP_TABLE_META_SIZE || (data.length - LOOKUP_TABLE_META_SIZE) % 32 !== 0) throw new NotParsable('bad address list');
  const addresses = new ByteReader(data.subarray(LOOKUP_TABLE_META_SIZE));
  return {
    type: 'lookupTable',
    info: {
      deactivationSlot: deactivationSlot.toString(),
      lastExtendedSlot: lastExtendedSlot.toString(),
      lastExtendedSlotStartIndex,
      authority: authority ?? undefined,
      addresses: Array.from({ length: (data.length - LOOKUP_TABLE_META_SIZE) / 32 }, () => addresses.pubkey()),
    },
  };
}
