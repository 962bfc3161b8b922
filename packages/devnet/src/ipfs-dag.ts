import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Blockstore } from 'interface-blockstore';
import { CID } from 'multiformats/cid';
import { KuboErrorCode, parseContentPath } from 'tollgate/plugins/ipfs';
import { checkBlockSize, dagCodec, HARD_BLOCK_LIMIT, hasher, multicodecCode, resolvePath, type Resolved } from './ipfs-ipld.js';
import { readWhole, uploadEntries } from './ipfs-multipart.js';
import { NdjsonAnswer } from './ipfs-ndjson.js';
import { boolOption, KUBO_HEADERS, KuboCommandError } from './ipfs-wire.js';
import type { NodePins } from './ipfs-pins.js';

/** A CID as Go's `cid.Cid` marshals it to JSON. */
function cidJson(cid: CID): { '/': string } {
  return { '/': cid.toString() };
}

function onlyArgument(search: URLSearchParams, name: string): string {
  const args = search.getAll('arg');
  if (args.length === 0) throw new KuboCommandError(`argument "${name}" is required`, KuboErrorCode.Client);
  if (args.length > 1) throw new KuboCommandError(`expected 1 argument "${name}", got ${args.length}`, KuboErrorCode.Client);
  return args[0]!;
}

/** Resolves the command's one path argument (`<cid>[/path]`, `/ipfs/<cid>[/path]`) as kubo's `ResolvePath`. */
async function resolveArgument(blockstore: Blockstore, search: URLSearchParams, signal: AbortSignal): Promise<Resolved> {
  const arg = onlyArgument(search, 'ref');
  let parsed;
  try {
    parsed = parseContentPath(arg);
  } catch (error) {
    throw new KuboCommandError((error as Error).message);
  }
  return resolvePath(blockstore, parsed.cid, parsed.segments, signal);
}

/**
 * kubo's `dag/put`: each file of the multipart body is one node in `input-codec` (default dag-json),
 * stored re-encoded in `store-codec` (default dag-cbor) under a CIDv1 of `hash` (default sha2-256);
 * NDJSON `{"Cid":{"/":"<cid>"}}` per node; with `pin`, each node joins the node's pin set (`pins`).
 */
export async function dagPut(blockstore: Blockstore, search: URLSearchParams, req: IncomingMessage, res: ServerResponse, signal: AbortSignal, pins?: NodePins): Promise<void> {
  const inputName = search.get('input-codec') ?? 'dag-json';
  const storeName = search.get('store-codec') ?? 'dag-cbor';
  const hashName = search.get('hash') ?? 'sha2-256';
  multicodecCode(inputName);
  multicodecCode(storeName);
  const hashFn = hasher(hashName, (name) => `unknown multicodec: ${JSON.stringify(name)}`);
  const input = dagCodec(inputName, 'decoder');
  const store = dagCodec(storeName, 'encoder');
  const allowBig = boolOption(search.get('allow-big-block'), false);
  const pin = boolOption(search.get('pin'), false);
  const answer = new NdjsonAnswer(res);
  await answer.run(async () => {
    let files = 0;
    for await (const entry of uploadEntries(req)) {
      if (entry.content === undefined) throw new KuboCommandError('expected a regular file');
      const body = await readWhole(entry.content, HARD_BLOCK_LIMIT, 'the object');
      let bytes: Uint8Array;
      try {
        bytes = store.encode(input.decode(body));
      } catch (error) {
        throw new KuboCommandError((error as Error).message);
      }
      checkBlockSize(bytes.length, allowBig);
      const cid = CID.createV1(store.code, await hashFn.digest(bytes));
      await blockstore.put(cid, bytes, { signal });
      if (pin) await pins?.pinRoots([cid]);
      files++;
      if (!(await answer.emit({ Cid: cidJson(cid) }))) return;
    }
    if (files === 0) throw new KuboCommandError('argument "object data" is required', KuboErrorCode.Client);
  });
}

/** kubo's `dag/get`: the node at a path (inside its block, when the path ends there), encoded in `output-codec` (default dag-json), streamed. */
export async function dagGet(blockstore: Blockstore, search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const outputName = search.get('output-codec') ?? 'dag-json';
  multicodecCode(outputName);
  const resolved = await resolveArgument(blockstore, search, signal);
  const output = dagCodec(outputName, 'encoder');
  let bytes: Uint8Array;
  try {
    bytes = output.encode(resolved.value);
  } catch (error) {
    throw new KuboCommandError((error as Error).message);
  }
  res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'text/plain', 'x-stream-output': '1' });
  res.end(bytes);
}

/** kubo's `dag/resolve`: the last block a path reaches through links, and the rest of the path inside it, as `{"Cid":{"/":...},"RemPath":...}`. */
export async function dagResolve(blockstore: Blockstore, search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const resolved = await resolveArgument(blockstore, search, signal);
  res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json' });
  res.end(`${JSON.stringify({ Cid: cidJson(resolved.cid), RemPath: resolved.remainder.join('/') })}\n`);
}
