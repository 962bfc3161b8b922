import * as dagCbor from '@ipld/dag-cbor';
import * as dagJson from '@ipld/dag-json';
import * as dagPb from '@ipld/dag-pb';
import type { Blockstore } from 'interface-blockstore';
import { CID } from 'multiformats/cid';
import * as json from 'multiformats/codecs/json';
import * as raw from 'multiformats/codecs/raw';
import type { MultihashHasher } from 'multiformats/hashes/interface';
import { identity } from 'multiformats/hashes/identity';
import { sha256, sha512 } from 'multiformats/hashes/sha2';
import { KuboErrorCode } from 'tollgate/plugins/ipfs';
import { KuboCommandError } from './ipfs-wire.js';

/** kubo's largest block (`SoftBlockLimit`, bitswap's): bigger ones only with `allow-big-block`. */
export const SOFT_BLOCK_LIMIT = 2 * 1024 * 1024;

/** The largest block this node takes even with `allow-big-block` (kubo has none; a devnet node keeps memory bounded). */
export const HARD_BLOCK_LIMIT = 16 * 1024 * 1024;

/** kubo's message for a block over {@link SOFT_BLOCK_LIMIT} (cmdutils.CheckBlockSize). */
export const BIG_BLOCK_MESSAGE = "produced block is over 2MiB: big blocks can't be exchanged with other peers. consider using UnixFS for automatic chunking of bigger files, or pass --allow-big-block to override";

/** A codec this node encodes and decodes: kubo's multicodec name and code, and the IPLD data model both ways. */
export interface NodeCodec {
  readonly name: string;
  readonly code: number;
  encode(value: unknown): Uint8Array;
  decode(bytes: Uint8Array): unknown;
}

const codec = (name: string, impl: { code: number; encode: (value: never) => Uint8Array; decode: (bytes: Uint8Array) => unknown }): NodeCodec => ({
  name,
  code: impl.code,
  encode: (value) => impl.encode(value as never),
  decode: (bytes) => impl.decode(bytes),
});

/** The codecs kubo's `dag` commands always have (go-ipld-prime's dag-cbor, dag-json, json, raw and dag-pb), by name. */
export const CODECS: ReadonlyMap<string, NodeCodec> = new Map([
  ['dag-cbor', codec('dag-cbor', dagCbor)],
  ['dag-json', codec('dag-json', dagJson)],
  ['dag-pb', codec('dag-pb', { code: dagPb.code, encode: (value: dagPb.PBNode) => dagPb.encode(dagPb.prepare(value)), decode: dagPb.decode })],
  ['json', codec('json', json)],
  ['raw', codec('raw', raw)],
]);

/**
 * Multicodec names a CID may carry (go-multicodec's table, the part a client of a block store meets):
 * `block/put` only labels bytes with one, it decodes nothing.
 */
const CID_CODEC_CODES: ReadonlyMap<string, number> = new Map([
  ['raw', 0x55], ['dag-pb', 0x70], ['dag-cbor', 0x71], ['libp2p-key', 0x72], ['git-raw', 0x78],
  ['dag-jose', 0x85], ['dag-cose', 0x86], ['cbor', 0x51], ['json', 0x0200], ['dag-json', 0x0129],
]);

/** The multicodec code of `name` (a name of the table, or `0x`-prefixed hex as go-multicodec takes it). */
export function multicodecCode(name: string): number {
  const known = CID_CODEC_CODES.get(name);
  if (known !== undefined) return known;
  if (/^0x[0-9a-fA-F]{1,8}$/.test(name)) return Number.parseInt(name.slice(2), 16);
  throw new KuboCommandError(`unknown multicodec: ${JSON.stringify(name)}`);
}

/** The codec of the `dag` commands named `name`, or kubo's error for one it cannot use as `role` (go-ipld-prime's words). */
export function dagCodec(name: string, role: 'decoder' | 'encoder'): NodeCodec {
  const found = CODECS.get(name);
  if (found !== undefined) return found;
  const code = multicodecCode(name);
  const byCode = [...CODECS.values()].find((c) => c.code === code);
  if (byCode !== undefined) return byCode;
  throw new KuboCommandError(`no ${role} registered for multicodec code ${code} (0x${code.toString(16)})`);
}

/** The codec of a CID's code, when this node can decode it. */
export function codecOf(cid: CID): NodeCodec | undefined {
  return [...CODECS.values()].find((c) => c.code === cid.code);
}

const HASHERS: ReadonlyMap<string, MultihashHasher<number>> = new Map<string, MultihashHasher<number>>([
  ['sha2-256', sha256],
  ['sha2-512', sha512],
  ['identity', identity],
]);

/** The multihash function named `name`; `message` says how kubo's command words the refusal. */
export function hasher(name: string, message: (name: string) => string): MultihashHasher<number> {
  const found = HASHERS.get(name);
  if (found === undefined) throw new KuboCommandError(message(name));
  return found;
}

/** The hasher of a CID's multihash, when this node has it (for checking imported blocks). */
export function hasherOf(cid: CID): MultihashHasher<number> | undefined {
  return [...HASHERS.values()].find((h) => h.code === cid.multihash.code);
}

/** The message of a missing block, as kubo's offline node words it. */
export function notFoundMessage(cid: CID): string {
  return `block was not found locally (offline): ipld: could not find ${cid.toString()}`;
}

/** Whether `error` is a blockstore's "no such block". */
export function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; code?: string };
  return e.name === 'NotFoundError' || e.code === 'ERR_NOT_FOUND' || e.code === 'ENOENT';
}

/** A block's bytes, or kubo's error when the node does not have it. */
export async function readBlock(blockstore: Blockstore, cid: CID, signal: AbortSignal): Promise<Uint8Array> {
  if (cid.multihash.code === identity.code) return cid.multihash.digest;
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of blockstore.get(cid, { signal })) chunks.push(chunk);
  } catch (error) {
    if (isNotFound(error)) throw new KuboCommandError(notFoundMessage(cid));
    throw error;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** A block decoded with its CID's codec; kubo's error for a codec this node does not have. */
export async function readNode(blockstore: Blockstore, cid: CID, signal: AbortSignal): Promise<unknown> {
  const found = codecOf(cid);
  if (found === undefined) throw new KuboCommandError(`no decoder registered for multicodec code ${cid.code} (0x${cid.code.toString(16)})`);
  const bytes = await readBlock(blockstore, cid, signal);
  try {
    return found.decode(bytes);
  } catch (error) {
    throw new KuboCommandError(`failed to decode ${cid.toString()}: ${(error as Error).message}`);
  }
}

/** Where a path led: the last block reached through links, the node inside it, and the segments walked inside that block. */
export interface Resolved {
  readonly cid: CID;
  readonly value: unknown;
  readonly remainder: readonly string[];
}

function noLink(segment: string, cid: CID): KuboCommandError {
  return new KuboCommandError(`no link named ${JSON.stringify(segment)} under ${cid.toString()}`);
}

/**
 * Resolves a content path as kubo's `dag resolve` and `dag get` do: through a dag-pb node by link name
 * (UnixFS directories), through any other node by map key or list index; a link crossed moves to its
 * block (the remainder starts again), a plain value stays inside the block.
 */
export async function resolvePath(blockstore: Blockstore, root: CID, segments: readonly string[], signal: AbortSignal): Promise<Resolved> {
  let cid = root;
  let value = await readNode(blockstore, cid, signal);
  let remainder: string[] = [];
  for (const segment of segments) {
    let next: unknown;
    if (cid.code === dagPb.code && remainder.length === 0) {
      next = (value as dagPb.PBNode).Links.find((link) => link.Name === segment)?.Hash;
    } else if (Array.isArray(value)) {
      next = /^(0|[1-9][0-9]*)$/.test(segment) ? value[Number(segment)] : undefined;
    } else if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && CID.asCID(value) === null) {
      next = Object.hasOwn(value, segment) ? (value as Record<string, unknown>)[segment] : undefined;
    }
    if (next === undefined) throw noLink(segment, cid);
    const link = CID.asCID(next);
    if (link !== null) {
      cid = link;
      value = await readNode(blockstore, cid, signal);
      remainder = [];
    } else {
      value = next;
      remainder.push(segment);
    }
  }
  return { cid, value, remainder };
}

/** The CIDs a decoded node links to (every CID inside it, depth first), for walking a DAG. */
export function linksOf(value: unknown, out: CID[] = []): CID[] {
  const link = CID.asCID(value);
  if (link !== null) {
    out.push(link);
  } else if (Array.isArray(value)) {
    for (const item of value) linksOf(item, out);
  } else if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    for (const item of Object.values(value)) linksOf(item, out);
  }
  return out;
}

/** Refuses a block too big for kubo (unless `allowBig`) or for this node. */
export function checkBlockSize(size: number, allowBig: boolean): void {
  if (size > HARD_BLOCK_LIMIT) throw new KuboCommandError(`block of ${size} bytes is over this node's limit of ${HARD_BLOCK_LIMIT} bytes`, KuboErrorCode.Client);
  if (size > SOFT_BLOCK_LIMIT && !allowBig) throw new KuboCommandError(BIG_BLOCK_MESSAGE);
}
