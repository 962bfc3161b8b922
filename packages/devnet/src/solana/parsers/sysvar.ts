/**
 * The `sysvar` parser, as agave's `parse_sysvar`, for the sysvars whose layout is fixed: clock, rent,
 * epoch schedule and last restart slot. Other sysvars fall back to base64 here (agave parses them).
 *
 * @module
 */
import { rustF64 } from '../json-text.js';
import { ByteReader, NotParsable } from './bytes.js';

/** The owner of every sysvar account. */
export const SYSVAR_OWNER = 'Sysvar1111111111111111111111111111111111111';

const PARSERS: Readonly<Record<string, (r: ByteReader) => unknown>> = {
  SysvarC1ock11111111111111111111111111111111: (r) => ({
    type: 'clock',
    info: { slot: r.u64(), epoch: r.u64(), epochStartTimestamp: r.i64(), leaderScheduleEpoch: r.u64(), unixTimestamp: r.i64() },
  }),
  SysvarRent111111111111111111111111111111111: (r) => ({
    type: 'rent',
    info: { lamportsPerByteYear: r.u64().toString(), exemptionThreshold: rustF64(r.f64()), burnPercent: r.u8() },
  }),
  SysvarEpochSchedu1e111111111111111111111111: (r) => ({
    type: 'epochSchedule',
    info: { slotsPerEpoch: r.u64(), leaderScheduleSlotOffset: r.u64(), warmup: r.bool(), firstNormalEpoch: r.u64(), firstNormalSlot: r.u64() },
  }),
  SysvarLastRestartS1ot1111111111111111111111: (r) => ({ type: 'lastRestartSlot', info: { lastRestartSlot: r.u64() } }),
};

/** Parses the sysvar at `address`; throws {@link NotParsable} for a sysvar without a parser here. */
export function parseSysvar(address: string, data: Uint8Array): unknown {
  const parse = PARSERS[address];
  if (parse === undefined) throw new NotParsable('no parser for this sysvar');
  return parse(new ByteReader(data));
}
