import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Blockstore } from 'interface-blockstore';
import type { CID } from 'multiformats/cid';
import { KuboErrorCode, parseContentPath } from 'tollgate/plugins/ipfs';
import { codecOf, linksOf } from './ipfs-ipld.js';
import { boolOption, KUBO_HEADERS, KuboCommandError, write } from './ipfs-wire.js';

/** The pin commands the node serves, `dag/stat` (what a gateway asks to weigh a pin) and `refs` (what it asks to list indirect pins). */
const PIN_COMMANDS = new Set(['pin/add', 'pin/ls', 'pin/rm', 'pin/update', 'dag/stat', 'refs']);

/** The file, in the node's data directory, that keeps its pins across restarts. */
export const PINS_FILE = 'pins.json';

interface Pin {
  readonly name?: string;
}

function notFound(cid: CID): string {
  return `block was not found locally (offline): ipld: could not find ${cid.toString()}`;
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; code?: string };
  return e.name === 'NotFoundError' || e.code === 'ERR_NOT_FOUND' || e.code === 'ENOENT';
}

function cidOf(arg: string): CID {
  try {
    const { cid, segments } = parseContentPath(arg);
    if (segments.length > 0) throw new Error(`pin a CID, not a path below one: ${arg}`);
    return cid;
  } catch (error) {
    throw new KuboCommandError((error as Error).message);
  }
}

function args(search: URLSearchParams, name: string, count?: number): string[] {
  const all = search.getAll('arg');
  if (all.length === 0) throw new KuboCommandError(`argument "${name}" is required`, KuboErrorCode.Client);
  if (count !== undefined && all.length !== count) throw new KuboCommandError(`expected ${count} arguments, got ${all.length}`, KuboErrorCode.Client);
  return all;
}

function sendJson(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json' });
  res.end(`${JSON.stringify(value)}\n`);
}

/**
 * The embedded node's pin set, as kubo keeps one: recursive pins by CID (with an optional name), kept in
 * `pins.json` beside the blocks, and the commands that read and change it (`pin/add`, `pin/ls`,
 * `pin/rm`, `pin/update`), plus `dag/stat` (a DAG's unique blocks and bytes) and `refs` (the CIDs a DAG
 * links). Pinning walks the whole DAG,
 * so a pin of content the node lacks fails as kubo offline does. The node collects no garbage: an unpinned
 * block stays readable until the data directory is removed.
 */
export class NodePins {
  readonly #pins = new Map<string, Pin>();
  readonly #file: string;
  readonly #dataDir: string;
  readonly #blockstore: Blockstore;
  #saving: Promise<void> = Promise.resolve();

  private constructor(dataDir: string, blockstore: Blockstore) {
    this.#dataDir = dataDir;
    this.#file = join(dataDir, PINS_FILE);
    this.#blockstore = blockstore;
  }

  /** The pin set of the node whose data is in `dataDir` (read from its pins file, if any). */
  static async open(dataDir: string, blockstore: Blockstore): Promise<NodePins> {
    const pins = new NodePins(dataDir, blockstore);
    try {
      const saved = JSON.parse(await readFile(pins.#file, 'utf8')) as Record<string, Pin>;
      for (const [cid, pin] of Object.entries(saved)) pins.#pins.set(cid, pin);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') throw error;
    }
    return pins;
  }

  /** Whether `command` is one of these. */
  serves(command: string | undefined): boolean {
    return command !== undefined && PIN_COMMANDS.has(command);
  }

  /** Pins `cids` (the roots `add` made), as kubo's `add` does unless told `pin=false`. */
  async pinRoots(cids: readonly CID[]): Promise<void> {
    for (const cid of cids) if (!this.#pins.has(cid.toString())) this.#pins.set(cid.toString(), {});
    await this.#save();
  }

  /** Answers one of {@link serves}'s commands. */
  async serve(command: string, search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    switch (command) {
      case 'pin/add': return this.#add(search, res, signal);
      case 'pin/ls': return this.#ls(search, res);
      case 'pin/rm': return this.#rm(search, res);
      case 'pin/update': return this.#update(search, res, signal);
      case 'refs': return this.#refs(search, res, signal);
      default: return this.#dagStat(search, res, signal);
    }
  }

  async #add(search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const cids = args(search, 'ipfs-path').map(cidOf);
    if (!boolOption(search.get('recursive') ?? search.get('r'), true)) throw new KuboCommandError('this node pins recursively only (recursive=false is not supported)');
    const name = search.get('name') ?? undefined;
    // Every block must be here before anything is pinned, as kubo checks the whole DAG first.
    for (const cid of cids) await this.#walk(cid, signal);
    for (const cid of cids) this.#pins.set(cid.toString(), name === undefined || name === '' ? {} : { name });
    await this.#save();
    sendJson(res, { Pins: cids.map((c) => c.toString()) });
  }

  async #ls(search: URLSearchParams, res: ServerResponse): Promise<void> {
    const type = search.get('type') ?? search.get('t') ?? 'all';
    if (!['all', 'recursive', 'direct', 'indirect'].includes(type)) throw new KuboCommandError(`invalid type '${type}', must be one of {direct, indirect, recursive, all}`, KuboErrorCode.Client);
    const names = boolOption(search.get('names') ?? search.get('n'), false);
    const stream = boolOption(search.get('stream') ?? search.get('s'), false);
    const quiet = boolOption(search.get('quiet') ?? search.get('q'), false);
    const listed: Array<[string, Pin]> = [];
    if (type === 'all' || type === 'recursive') {
      const wanted = search.getAll('arg');
      if (wanted.length === 0) listed.push(...this.#pins);
      for (const arg of wanted) {
        const cid = cidOf(arg).toString();
        const pin = this.#pins.get(cid);
        if (pin === undefined) throw new KuboCommandError(`path '${arg}' is not pinned`);
        listed.push([cid, pin]);
      }
    }
    const entry = (pin: Pin): Record<string, string> => ({ ...(quiet ? {} : { Type: 'recursive' }), ...(names && pin.name !== undefined ? { Name: pin.name } : {}) });
    if (!stream) {
      sendJson(res, { Keys: Object.fromEntries(listed.map(([cid, pin]) => [cid, entry(pin)])) });
      return;
    }
    res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json', 'x-chunked-output': '1' });
    for (const [cid, pin] of listed) if (!(await write(res, `${JSON.stringify({ Cid: cid, ...entry(pin) })}\n`))) return;
    res.end();
  }

  async #rm(search: URLSearchParams, res: ServerResponse): Promise<void> {
    const cids = args(search, 'ipfs-path').map(cidOf);
    for (const cid of cids) if (!this.#pins.has(cid.toString())) throw new KuboCommandError('not pinned or pinned indirectly');
    for (const cid of cids) this.#pins.delete(cid.toString());
    await this.#save();
    sendJson(res, { Pins: cids.map((c) => c.toString()) });
  }

  async #update(search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const [from, to] = args(search, 'from-path', 2).map(cidOf) as [CID, CID];
    const unpin = boolOption(search.get('unpin'), true);
    const pin = this.#pins.get(from.toString());
    if (pin === undefined) throw new KuboCommandError("'from' cid was not recursively pinned already");
    await this.#walk(to, signal);
    if (unpin) this.#pins.delete(from.toString());
    this.#pins.set(to.toString(), pin);
    await this.#save();
    sendJson(res, { Pins: [from.toString(), to.toString()] });
  }

  /** kubo's `dag/stat` with `progress=false`: the DAG's unique blocks and their bytes. */
  async #dagStat(search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const stats = [];
    let total = 0;
    let blocks = 0;
    for (const arg of args(search, 'root')) {
      const cid = cidOf(arg);
      const dag = await this.#walk(cid, signal);
      stats.push({ Cid: { '/': cid.toString() }, Size: dag.bytes, NumBlocks: dag.blocks });
      total += dag.bytes;
      blocks += dag.blocks;
    }
    sendJson(res, { UniqueBlocks: blocks, TotalSize: total, SharedSize: 0, Ratio: 1, DagStats: stats });
  }

  /**
   * kubo's `refs`: the CIDs the blocks under each argument link, as NDJSON `{"Ref","Err"}`, the root left
   * out; `recursive` follows the links all the way down (else the root's own links only), `unique` names
   * each CID once. A block the node lacks fails the command before any output, as kubo offline.
   */
  async #refs(search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const roots = args(search, 'ipfs-path').map(cidOf);
    const recursive = boolOption(search.get('recursive') ?? search.get('r'), false);
    const unique = boolOption(search.get('unique') ?? search.get('u'), false);
    const refs: string[] = [];
    const named = new Set<string>();
    for (const root of roots) {
      const walked = new Set<string>();
      const pending: CID[] = [root];
      while (pending.length > 0) {
        const cid = pending.pop()!;
        if (walked.has(cid.toString())) continue;
        walked.add(cid.toString());
        const { links } = await this.#block(cid, signal);
        for (const link of links) {
          if (unique && named.has(link.toString())) continue;
          named.add(link.toString());
          refs.push(link.toString());
        }
        if (recursive) pending.push(...links.reverse());
      }
    }
    res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json', 'x-chunked-output': '1' });
    res.end(refs.map((ref) => `${JSON.stringify({ Ref: ref, Err: '' })}\n`).join(''));
  }

  /** Reads every block of the DAG under `root`, following the links of the codecs the node decodes: their count and bytes. */
  async #walk(root: CID, signal: AbortSignal): Promise<{ blocks: number; bytes: number }> {
    const seen = new Set<string>();
    const pending = [root];
    let bytes = 0;
    while (pending.length > 0) {
      const cid = pending.pop()!;
      if (seen.has(cid.toString())) continue;
      seen.add(cid.toString());
      const block = await this.#block(cid, signal);
      bytes += block.bytes;
      pending.push(...block.links);
    }
    return { blocks: seen.size, bytes };
  }

  /** One block's size and the CIDs it links (through the codecs the node decodes: dag-pb, dag-cbor, dag-json...; a raw block links none). */
  async #block(cid: CID, signal: AbortSignal): Promise<{ bytes: number; links: CID[] }> {
    const chunks: Uint8Array[] = [];
    try {
      for await (const chunk of this.#blockstore.get(cid, { signal })) chunks.push(chunk);
    } catch (error) {
      if (isNotFound(error)) throw new KuboCommandError(notFound(cid));
      throw error;
    }
    const block = Buffer.concat(chunks);
    const codec = codecOf(cid);
    if (codec === undefined) return { bytes: block.length, links: [] };
    let node: unknown;
    try {
      node = codec.decode(block);
    } catch (error) {
      throw new KuboCommandError(`cannot decode ${cid.toString()} as ${codec.name}: ${(error as Error).message}`);
    }
    return { bytes: block.length, links: linksOf(node) };
  }

  /** Writes the pin set (one write at a time, through a temporary file, so a crash leaves the old or the new set). */
  #save(): Promise<void> {
    const snapshot = JSON.stringify(Object.fromEntries(this.#pins));
    // A failed write is the command's error; the next write starts afresh.
    this.#saving = this.#saving.catch(() => undefined).then(async () => {
      await mkdir(this.#dataDir, { recursive: true });
      await writeFile(`${this.#file}.tmp`, snapshot);
      await rename(`${this.#file}.tmp`, this.#file);
    });
    return this.#saving;
  }
}
