import type { IncomingMessage, ServerResponse } from 'node:http';
import { CarBlockIterator } from '@ipld/car/iterator';
import type { Blockstore } from 'interface-blockstore';
import type { CID } from 'multiformats/cid';
import { equals } from 'multiformats/bytes';
import { KuboErrorCode } from 'tollgate/plugins/ipfs';
import { checkBlockSize, codecOf, hasherOf, linksOf, readBlock } from './ipfs-ipld.js';
import { uploadEntries } from './ipfs-multipart.js';
import { NdjsonAnswer } from './ipfs-ndjson.js';
import { boolOption, KuboCommandError } from './ipfs-wire.js';
import type { NodePins } from './ipfs-pins.js';

/** Blocks a root's DAG may have for this node to check it is whole (a devnet bound on the walk). */
const MAX_WALK_BLOCKS = 1_000_000;

function importError(previous: CID | undefined, current: CID | undefined, error: unknown): KuboCommandError {
  const message = error instanceof Error ? error.message : String(error);
  if (current !== undefined) return new KuboCommandError(`import failed at block ${JSON.stringify(current.toString())}: ${message}`);
  if (previous !== undefined) return new KuboCommandError(`import failed after block ${JSON.stringify(previous.toString())}: ${message}`);
  return new KuboCommandError(`import failed: ${message}`);
}

/** Checks that every block under `root` is here, as kubo's recursive pin does; the error's message, or undefined when whole. */
async function missingUnder(blockstore: Blockstore, root: CID, signal: AbortSignal): Promise<string | undefined> {
  const seen = new Set<string>();
  const queue: CID[] = [root];
  while (queue.length > 0) {
    const cid = queue.pop()!;
    const key = cid.toString();
    if (seen.has(key)) continue;
    seen.add(key);
    if (seen.size > MAX_WALK_BLOCKS) return `the DAG has more than ${MAX_WALK_BLOCKS} blocks`;
    try {
      const bytes = await readBlock(blockstore, cid, signal);
      const codec = codecOf(cid);
      if (codec === undefined) return `no decoder registered for multicodec code ${cid.code} (0x${cid.code.toString(16)})`;
      queue.push(...linksOf(codec.decode(bytes)));
    } catch (error) {
      return (error as Error).message;
    }
  }
  return undefined;
}

/**
 * kubo's `dag/import`: every block of each CAR (v1 or v2) in the multipart body is checked against its
 * CID and stored; then, unless `pin-roots=false` or `local-only`, each root of the headers is answered
 * `{"Root":{"Cid":{"/":...},"PinErrorMsg":""}}` (the message says what is missing when its DAG is not
 * whole; a whole one joins the node's pin set, `pins`), and with `stats` a last
 * `{"Stats":{"BlockCount","BlockBytesCount"}}`. Blocks over 2 MiB need `allow-big-block`.
 */
export async function dagImport(blockstore: Blockstore, search: URLSearchParams, req: IncomingMessage, res: ServerResponse, signal: AbortSignal, pins?: NodePins): Promise<void> {
  const pinRootsSet = search.has('pin-roots');
  const pinRoots = boolOption(search.get('pin-roots'), true);
  const localOnly = boolOption(search.get('local-only'), false);
  const stats = boolOption(search.get('stats'), false);
  const allowBig = boolOption(search.get('allow-big-block'), false);
  for (const flag of ['silent', 'fast-provide-root', 'fast-provide-dag', 'fast-provide-wait']) boolOption(search.get(flag), false);
  if (localOnly && pinRootsSet && pinRoots) throw new KuboCommandError('--local-only implies --pin-roots=false and cannot be combined with --pin-roots=true; please drop one of them');
  const answer = new NdjsonAnswer(res);
  await answer.run(async () => {
    const roots = new Map<string, CID>();
    let blockCount = 0;
    let blockBytes = 0;
    let files = 0;
    for await (const entry of uploadEntries(req)) {
      if (entry.content === undefined) throw new KuboCommandError('expected a file handle');
      files++;
      let previous: CID | undefined;
      let car: CarBlockIterator;
      try {
        car = await CarBlockIterator.fromIterable(entry.content);
        for (const root of await car.getRoots()) roots.set(root.toString(), root);
      } catch (error) {
        throw importError(undefined, undefined, error);
      }
      const blocks = car[Symbol.asyncIterator]();
      for (;;) {
        let next: IteratorResult<{ cid: CID; bytes: Uint8Array }>;
        try {
          next = await blocks.next();
        } catch (error) {
          throw importError(previous, undefined, error);
        }
        if (next.done === true) break;
        const { cid, bytes } = next.value;
        try {
          checkBlockSize(bytes.length, allowBig);
          const hash = hasherOf(cid);
          if (hash === undefined) throw new Error(`unsupported multihash code 0x${cid.multihash.code.toString(16)}`);
          const digest = await hash.digest(bytes);
          if (!equals(digest.digest, cid.multihash.digest)) throw new Error('hash of the block does not match its CID');
          if (cid.multihash.code !== 0x00) await blockstore.put(cid, bytes, { signal });
        } catch (error) {
          throw importError(previous, cid, error);
        }
        blockCount++;
        blockBytes += bytes.length;
        previous = cid;
      }
    }
    if (files === 0) throw new KuboCommandError('argument "path" is required', KuboErrorCode.Client);
    if (pinRoots && !localOnly) {
      for (const root of roots.values()) {
        const missing = await missingUnder(blockstore, root, signal);
        // A whole DAG's root is pinned, as kubo pins the roots it imports.
        if (missing === undefined) await pins?.pinRoots([root]);
        if (!(await answer.emit({ Root: { Cid: { '/': root.toString() }, PinErrorMsg: missing ?? '' } }))) return;
      }
    }
    if (stats) await answer.emit({ Stats: { BlockCount: blockCount, BlockBytesCount: blockBytes } });
  });
}
