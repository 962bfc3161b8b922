import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Blockstore } from 'interface-blockstore';
import { CID } from 'multiformats/cid';
import { KuboErrorCode } from 'tollgate/plugins/ipfs';
import { checkBlockSize, HARD_BLOCK_LIMIT, hasher, multicodecCode } from './ipfs-ipld.js';
import { readWhole, uploadEntries } from './ipfs-multipart.js';
import { NdjsonAnswer } from './ipfs-ndjson.js';
import { boolOption, intOption, KuboCommandError } from './ipfs-wire.js';
import type { NodePins } from './ipfs-pins.js';

const DAG_PB = 0x70;

/** How `block/put` labels and hashes a block: kubo's `BlockPutOptions` after its options are applied. */
interface BlockPrefix {
  readonly version: 0 | 1;
  readonly codec: number;
  readonly hash: string;
}

/**
 * The CID prefix of kubo's `block put` for a request's options: CIDv1 `raw` sha2-256 unless `cid-codec`
 * or `mhtype` say otherwise; the deprecated `format` (`v0` gives a CIDv0, `protobuf` and `cbor` are
 * dag-pb and dag-cbor) wins over `cid-codec`'s default and cannot be combined with another value of it.
 */
export function blockPrefix(search: URLSearchParams): BlockPrefix {
  const hash = search.get('mhtype') ?? 'sha2-256';
  hasher(hash, (name) => `unrecognized multihash function: ${name}`);
  const mhlen = intOption('mhlen', search.get('mhlen')) ?? -1;
  const full = hash === 'sha2-512' ? 64 : hash === 'sha2-256' ? 32 : -1;
  if (mhlen !== -1 && mhlen !== full) throw new KuboCommandError(`mhlen ${mhlen} is not supported by this node (only the hash's full length)`);
  const cidCodec = search.get('cid-codec') ?? 'raw';
  const format = search.get('format') ?? search.get('f') ?? '';
  if (format === '') return { version: 1, codec: multicodecCode(cidCodec === '' ? 'raw' : cidCodec), hash };
  if (cidCodec !== '' && cidCodec !== 'raw') throw new KuboCommandError(`unable to use "format" (deprecated) and a custom "cid-codec" at the same time`);
  const name = format === 'v0' || format === 'protobuf' ? 'dag-pb' : format === 'cbor' ? 'dag-cbor' : format;
  const codec = multicodecCode(name);
  if (format !== 'v0') return { version: 1, codec, hash };
  if (hash !== 'sha2-256') throw new KuboCommandError('only sha2-255-32 is allowed with CIDv0');
  return { version: 0, codec: DAG_PB, hash };
}

/** The CID of `bytes` under `prefix`. */
export async function blockCid(prefix: BlockPrefix, bytes: Uint8Array): Promise<CID> {
  const digest = await hasher(prefix.hash, (name) => `unrecognized multihash function: ${name}`).digest(bytes);
  return prefix.version === 0 ? CID.createV0(digest as Parameters<typeof CID.createV0>[0]) : CID.createV1(prefix.codec, digest);
}

/**
 * kubo's `block/put`: stores each file of the multipart body as one block, as given (nothing is
 * decoded), and answers NDJSON `{"Key","Size"}` per block. Blocks over 2 MiB are refused unless
 * `allow-big-block`; with `pin`, each block joins the node's pin set (`pins`).
 */
export async function blockPut(blockstore: Blockstore, search: URLSearchParams, req: IncomingMessage, res: ServerResponse, signal: AbortSignal, pins?: NodePins): Promise<void> {
  const prefix = blockPrefix(search);
  const allowBig = boolOption(search.get('allow-big-block'), false);
  const pin = boolOption(search.get('pin'), false);
  const answer = new NdjsonAnswer(res);
  await answer.run(async () => {
    let files = 0;
    for await (const entry of uploadEntries(req)) {
      if (entry.content === undefined) throw new KuboCommandError('expected a file');
      const bytes = await readWhole(entry.content, HARD_BLOCK_LIMIT, 'the block');
      checkBlockSize(bytes.length, allowBig);
      const cid = await blockCid(prefix, bytes);
      if (cid.multihash.code !== 0x00) await blockstore.put(cid, bytes, { signal });
      if (pin) await pins?.pinRoots([cid]);
      files++;
      if (!(await answer.emit({ Key: cid.toString(), Size: bytes.length }))) return;
    }
    if (files === 0) throw new KuboCommandError('argument "data" is required', KuboErrorCode.Client);
  });
}
