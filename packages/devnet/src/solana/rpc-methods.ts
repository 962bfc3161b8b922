/**
 * The methods the embedded Solana node answers, as an agave node answers them: `getAccountInfo`,
 * `getClusterNodes`, `getSlot`, `getHealth`, `getVersion`.
 *
 * @module
 */
import { encodeAccount, type AccountEncoding, type DataSlice } from './account-encoding.js';
import type { Commitment, LiteSvmNode } from './litesvm-node.js';
import { RpcError } from './rpc-error.js';
import { expectNoParams, positional, readCommitment, readConfig, readString, readU64, readVariant, serdeError } from './serde-params.js';
import bs58 from 'bs58';

/** What a method may use: the node, and the address its RPC service answers on. */
export interface MethodContext {
  /** The node. */
  readonly node: LiteSvmNode;
  /** `host:port` of the RPC service (the `rpc` field of `getClusterNodes`). */
  readonly rpcAddress: string;
}

/** A method: params in, result out (or an {@link RpcError} thrown). */
export type Method = (params: unknown, ctx: MethodContext) => unknown;

const COMMITMENTS: readonly Commitment[] = ['processed', 'confirmed', 'finalized'];
const ENCODINGS: readonly AccountEncoding[] = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'];

/** agave's `get_bank_with_config`: the slot at the commitment, checked against `minContextSlot`. */
function contextSlot(node: LiteSvmNode, config: Record<string, unknown> | undefined): bigint {
  const slot = node.slot(readCommitment(config?.commitment, COMMITMENTS, 'finalized'));
  const min = readU64(config?.minContextSlot);
  if (min !== undefined && Number(slot) < min) throw RpcError.minContextSlotNotReached(slot);
  return slot;
}

function readDataSlice(value: unknown): DataSlice | undefined {
  const slice = readConfig(value, 'UiDataSliceConfig');
  if (slice === undefined) return undefined;
  if (slice.offset === undefined) throw serdeError('missing field `offset`');
  if (slice.length === undefined) throw serdeError('missing field `length`');
  return { offset: readU64(slice.offset, 'usize')!, length: readU64(slice.length, 'usize')! };
}

/** agave's `verify_pubkey` (`Pubkey::from_str`): `-32602 Invalid param: WrongSize` / `Invalid param: Invalid`. */
function verifyPubkey(value: string): string {
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

async function getAccountInfo(params: unknown, { node }: MethodContext): Promise<unknown> {
  const [address, rawConfig] = positional(params, 1, 2);
  const pubkeyText = readString(address);
  const config = readConfig(rawConfig, 'RpcAccountInfoConfig');
  const encoding = readVariant(config?.encoding, ENCODINGS) ?? 'binary';
  const slice = readDataSlice(config?.dataSlice);
  readU64(config?.minContextSlot);
  const pubkey = verifyPubkey(pubkeyText);
  const slot = contextSlot(node, config);
  const account = node.getAccount(pubkey);
  const value = account === null ? null : await encodeAccount(node, pubkey, account, encoding, slice);
  return { context: { slot, apiVersion: node.version }, value };
}

function getClusterNodes(params: unknown, { node, rpcAddress }: MethodContext): unknown {
  expectNoParams(params);
  // One node: this one. Only its RPC service exists; the other addresses are the ones a
  // solana-test-validator reports on loopback (gossip 1024...), UDP TPU ports null as on current agave.
  const at = (port: number): string => `127.0.0.1:${port}`;
  return [{
    pubkey: node.identity,
    gossip: at(1024),
    tvu: at(1025),
    tpu: null,
    tpuQuic: at(1033),
    tpuForwards: null,
    tpuForwardsQuic: at(1034),
    tpuVote: at(1031),
    serveRepair: at(1032),
    rpc: rpcAddress,
    pubsub: null,
    version: node.version,
    featureSet: node.featureSet,
    shredVersion: node.shredVersion,
    clientId: 'Agave',
  }];
}

function getSlot(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  return contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
}

function getHealth(params: unknown): unknown {
  expectNoParams(params);
  return 'ok';
}

function getVersion(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  return { 'solana-core': node.version, 'feature-set': node.featureSet };
}

/** Every method the node answers, by name; others get `-32601 Method not found`. */
export const SOLANA_NODE_METHODS: Readonly<Record<string, Method>> = Object.freeze({
  getAccountInfo,
  getClusterNodes,
  getSlot,
  getHealth,
  getVersion,
});
