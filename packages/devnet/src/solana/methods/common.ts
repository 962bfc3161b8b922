/**
 * What the node's methods share: the method type, agave's bank selection by commitment and
 * `minContextSlot`, the `context` wrapper, and pubkey and signature checks.
 *
 * @module
 */
import bs58 from 'bs58';
import type { DataSlice } from '../account-encoding.js';
import type { Commitment, LiteSvmNode } from '../litesvm-node.js';
import { RpcError } from '../rpc-error.js';
import { readCommitment, readConfig, readU64, serdeError, unexpected } from '../serde-params.js';

/** What a method may use: the node, and the address its RPC service answers on. */
export interface MethodContext {
  /** The node. */
  readonly node: LiteSvmNode;
  /** `host:port` of the RPC service (the `rpc` field of `getClusterNodes`). */
  readonly rpcAddress: string;
  /** `host:port` of the WebSocket service (the `pubsub` field of `getClusterNodes`), if one runs. */
  readonly pubsubAddress?: string;
}

/** A method: params in, result out (or an {@link RpcError} thrown). */
export type Method = (params: unknown, ctx: MethodContext) => unknown;

/** The three commitment levels. */
export const COMMITMENTS: readonly Commitment[] = ['processed', 'confirmed', 'finalized'];

/** The commitment of a config (agave: an unknown level means the default, `finalized`). */
export function commitmentOf(config: Record<string, unknown> | undefined): Commitment {
  return readCommitment(config?.commitment, COMMITMENTS, 'finalized');
}

/** agave's `get_bank_with_config`: the slot at the commitment, checked against `minContextSlot`. */
export function contextSlot(node: LiteSvmNode, config: Record<string, unknown> | undefined): bigint {
  const slot = node.slot(commitmentOf(config));
  const min = readU64(config?.minContextSlot);
  if (min !== undefined && Number(slot) < min) throw RpcError.minContextSlotNotReached(slot);
  return slot;
}

/** agave's `RpcResponse`: `{ context: { slot, apiVersion }, value }`. */
export function withContext(node: LiteSvmNode, slot: bigint, value: unknown): unknown {
  return { context: { slot, apiVersion: node.version }, value };
}

/** `dataSlice` of a config. */
export function readDataSlice(value: unknown): DataSlice | undefined {
  const slice = readConfig(value, 'UiDataSliceConfig');
  if (slice === undefined) return undefined;
  if (slice.offset === undefined) throw serdeError('missing field `offset`');
  if (slice.length === undefined) throw serdeError('missing field `length`');
  return { offset: readU64(slice.offset, 'usize')!, length: readU64(slice.length, 'usize')! };
}

/** agave's `verify_pubkey` (`Pubkey::from_str`): `-32602 Invalid param: WrongSize` / `Invalid param: Invalid`. */
export function verifyPubkey(value: string): string {
  if (value.length > 44) throw RpcError.invalidParams('Invalid param: WrongSize');
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    throw RpcError.invalidParams('Invalid param: Invalid');
  }
  if (bytes.length !== 32) throw RpcError.invalidParams('Invalid param: WrongSize');
  return value;
}

/** agave's `verify_signature`: `-32602 Invalid param: ...` for what is not a 64-byte base-58 signature. */
export function verifySignature(value: string): string {
  let bytes: Uint8Array | undefined;
  try {
    bytes = value.length <= 88 ? bs58.decode(value) : undefined;
  } catch {
    bytes = undefined;
  }
  if (bytes === undefined || bytes.length !== 64) throw RpcError.invalidParams('Invalid param: Invalid');
  return value;
}

/** An optional bool field: absent or null → undefined. */
export function readBool(value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw serdeError(`invalid type: ${unexpected(value)}, expected a boolean`);
  return value;
}

/** A list of strings (`Vec<String>`). */
export function readStringList(value: unknown): string[] {
  if (!Array.isArray(value)) throw serdeError(`invalid type: ${unexpected(value)}, expected a sequence`);
  return value.map((item) => {
    if (typeof item !== 'string') throw serdeError(`invalid type: ${unexpected(item)}, expected a string`);
    return item;
  });
}

/** agave's refusal of `processed` where a method needs at least `confirmed` (blocks, transactions). */
export function atLeastConfirmed(config: Record<string, unknown> | undefined): 'confirmed' | 'finalized' {
  const commitment = commitmentOf(config);
  if (commitment === 'processed') throw RpcError.invalidParams('Method does not support commitment below `confirmed`');
  return commitment;
}
