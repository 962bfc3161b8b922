/**
 * The `bpf-upgradeable-loader` parser, as agave's `parse_bpf_upgradeable_loader`: program, program
 * data, buffer and uninitialized accounts of the upgradeable BPF loader.
 *
 * @module
 */
import { ByteReader, NotParsable } from './bytes.js';

/** Parses bincode `UpgradeableLoaderState`; program bytes come back as a base64 tuple. */
export function parseUpgradeableLoader(data: Uint8Array): unknown {
  const r = new ByteReader(data);
  const tag = r.u32();
  const base64 = (bytes: Uint8Array): [string, string] => [Buffer.from(bytes).toString('base64'), 'base64'];
  switch (tag) {
    case 0:
      return { type: 'uninitialized' };
    case 1: {
      const authority = r.optionPubkey();
      return { type: 'buffer', info: { authority, data: base64(r.rest()) } };
    }
    case 2:
      return { type: 'program', info: { programData: r.pubkey() } };
    case 3: {
      const slot = r.u64();
      const authority = r.optionPubkey();
      return { type: 'programData', info: { slot, authority, data: base64(r.rest()) } };
    }
    default:
      throw new NotParsable('unknown loader state');
  }
}
