import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { arch, platform } from 'node:os';
import { unixfs, type UnixFS } from '@helia/unixfs';
import { FsBlockstore } from 'blockstore-fs';
import type { Blockstore } from 'interface-blockstore';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced, trickle } from 'ipfs-unixfs-importer/layout';
import type { ImporterOptions } from 'ipfs-unixfs-importer';
import type { CID } from 'multiformats/cid';
import { decodeDagPb, KuboErrorCode, objectJson, parseContentPath } from 'tollgate/plugins/ipfs';
import { blockPut } from './ipfs-block-put.js';
import { isNotFound, notFoundMessage, readBlock } from './ipfs-ipld.js';
import { dagImport } from './ipfs-dag-import.js';
import { dagGet, dagPut, dagResolve } from './ipfs-dag.js';
import { get } from './ipfs-get.js';
import { uploadEntries } from './ipfs-multipart.js';
import { NodePins } from './ipfs-pins.js';
import { boolOption, endWithStreamError, intOption, KUBO_HEADERS, KuboCommandError, sendKuboError, sendText, write } from './ipfs-wire.js';

/** Bytes of a file `cat` reads from the blockstore ahead of its reader, at most. */
const CAT_WINDOW_BYTES = 4 * 1024 * 1024;

/** What the embedded IPFS node reports as its version (`/api/v0/version`). */
export const IPFS_NODE_VERSION = 'tollgate-devnet-helia';

/** The commands the node answers (`object/*` aside, which it answers as removed when `objectGet` is false). */
const NODE_COMMANDS: ReadonlySet<string> = new Set(['add', 'cat', 'get', 'object/get', 'block/get', 'block/stat', 'block/put', 'dag/put', 'dag/get', 'dag/resolve', 'dag/import', 'version']);

/** The commands that read a multipart body. */
const UPLOAD_COMMANDS: ReadonlySet<string> = new Set(['add', 'block/put', 'dag/put', 'dag/import']);

/** kubo's default chunk size (`size-262144`) and fan-out (174 links per node) for `add`. */
export const KUBO_CHUNK_SIZE = 262_144;
const KUBO_MAX_LINKS = 174;

/** Options of {@link startIpfsNode}. */
export interface IpfsNodeOptions {
  /** Where blocks are stored (a blockstore-fs directory, created if missing); content survives restarts. */
  readonly dataDir: string;
  /** Interface to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** Port (default 0: a free one). */
  readonly port?: number;
  /** Whether `object/get` is answered (default true); `false` answers as kubo 0.28 and later, which removed it. */
  readonly objectGet?: boolean;
}

/** A running embedded IPFS node. */
export interface IpfsNode {
  /** Its RPC URL, `http://127.0.0.1:<port>` (commands at `/api/v0/<command>`). */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Where its blocks are. */
  readonly dataDir: string;
  /** The blockstore. */
  readonly blockstore: Blockstore;
  /** The UnixFS API over it. */
  readonly fs: UnixFS;
  /** Adds one file's bytes with kubo's `add` defaults and returns its CID (as `POST /api/v0/add` would). */
  add(content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<CID>;
  /** Stops serving (aborting requests in flight) and closes the blockstore. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The importer options of kubo's default `ipfs add` (CIDv0, dag-pb leaves, 256 KiB chunks, balanced
 * layout with 174 links per node), with the flags of an `add` request applied.
 */
export function kuboAddOptions(flags: { cidVersion?: 0 | 1; rawLeaves?: boolean; chunkSize?: number; trickle?: boolean; wrapWithDirectory?: boolean } = {}): Partial<ImporterOptions> {
  const cidVersion = flags.cidVersion ?? 0;
  const rawLeaves = flags.rawLeaves ?? cidVersion === 1;
  return {
    cidVersion,
    rawLeaves,
    leafType: rawLeaves ? 'raw' : 'file',
    chunker: fixedSize({ chunkSize: flags.chunkSize ?? KUBO_CHUNK_SIZE }),
    layout: flags.trickle === true ? trickle({ maxChildrenPerNode: KUBO_MAX_LINKS, layerRepeat: 4 }) : balanced({ maxChildrenPerNode: KUBO_MAX_LINKS }),
    wrapWithDirectory: flags.wrapWithDirectory ?? false,
    reduceSingleLeafToSelf: true,
    // Parts of a multipart upload arrive one after the other: import them one at a time.
    fileImportConcurrency: 1,
  };
}


function required(search: URLSearchParams, name: string): string[] {
  const args = search.getAll('arg');
  if (args.length === 0) throw new KuboCommandError(`argument "${name}" is required`, KuboErrorCode.Client);
  return args;
}

function contentPath(arg: string): { cid: CID; path: string | undefined; segments: readonly string[] } {
  try {
    const parsed = parseContentPath(arg);
    return { cid: parsed.cid, path: parsed.segments.length === 0 ? undefined : parsed.segments.join('/'), segments: parsed.segments };
  } catch (error) {
    throw new KuboCommandError((error as Error).message);
  }
}

/** The node's commands: each answers one request, as kubo's HTTP RPC does. */
class Commands {
  constructor(
    private readonly blockstore: Blockstore,
    private readonly fs: UnixFS,
    private readonly objectGet: boolean,
    private readonly pins?: NodePins,
  ) {}

  async version(_search: URLSearchParams, res: ServerResponse): Promise<void> {
    const body = `${JSON.stringify({ Version: IPFS_NODE_VERSION, Commit: '', Repo: 'blockstore-fs', System: `${arch() === 'x64' ? 'amd64' : arch()}/${platform()}`, Golang: `node${process.version}` })}\n`;
    res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json' });
    res.end(body);
  }

  async cat(search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const args = required(search, 'ipfs-path');
    const offset = intOption('offset', search.get('offset') ?? search.get('o')) ?? 0;
    const length = intOption('length', search.get('length') ?? search.get('l'));
    if (offset < 0) throw new KuboCommandError('cannot specify negative offset');
    if (length !== undefined && length < 0) throw new KuboCommandError('cannot specify negative length');
    const files: Array<{ cid: CID; path: string | undefined; size: number }> = [];
    for (const arg of args) {
      const { cid, path } = contentPath(arg);
      let stat;
      try {
        stat = await this.fs.stat(cid, { ...(path === undefined ? {} : { path }), signal, offline: true });
      } catch (error) {
        if (isNotFound(error)) throw new KuboCommandError(notFoundMessage(cid));
        throw new KuboCommandError((error as Error).message);
      }
      if (stat.type === 'directory') throw new KuboCommandError('this dag node is a directory');
      files.push({ cid, path, size: Number(stat.size) });
    }
    const total = files.reduce((sum, f) => sum + f.size, 0);
    let skip = Math.min(offset, total);
    let remaining = length === undefined ? total - skip : Math.min(length, total - skip);
    res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'text/plain', 'x-stream-output': '1', 'x-content-length': String(remaining) });
    try {
      for (const file of files) {
        if (remaining === 0) break;
        if (skip >= file.size) {
          skip -= file.size;
          continue;
        }
        const take = Math.min(file.size - skip, remaining);
        // The exporter behind `cat` reads its whole range ahead into an unbounded queue, whatever the
        // reader takes: asking for one window at a time keeps a paused reader's cost to one window.
        for (let at = skip; at < skip + take; at += CAT_WINDOW_BYTES) {
          const length = Math.min(CAT_WINDOW_BYTES, skip + take - at);
          for await (const chunk of this.fs.cat(file.cid, { ...(file.path === undefined ? {} : { path: file.path }), offset: at, length, signal, offline: true })) {
            if (!(await write(res, chunk))) return;
          }
        }
        remaining -= take;
        skip = 0;
      }
      res.end();
    } catch (error) {
      endWithStreamError(res, isNotFound(error) ? 'block was not found locally (offline)' : (error as Error).message);
    }
  }

  async objectGetCommand(search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    if (!this.objectGet) throw new KuboCommandError("removed, use 'ipfs dag' or 'ipfs files' instead");
    const [arg] = required(search, 'key');
    const dataEncoding = search.get('data-encoding') ?? 'text';
    if (dataEncoding !== 'text' && dataEncoding !== 'base64') throw new KuboCommandError('unknown data field encoding');
    const encoding = search.get('encoding') ?? search.get('enc') ?? 'json';
    if (encoding !== 'json') throw new KuboCommandError(`encoding "${encoding}" is not supported by this node`, KuboErrorCode.Client);
    const { cid, segments } = contentPath(arg!);
    let current = cid;
    let block = await readBlock(this.blockstore, current, signal);
    for (const segment of segments) {
      const next = this.#decode(current, block).Links.find((link) => link.Name === segment)?.Hash;
      if (next === undefined) throw new KuboCommandError(`no link named "${segment}" under ${current.toString()}`);
      current = next;
      block = await readBlock(this.blockstore, current, signal);
    }
    const body = objectJson(this.#decode(current, block), dataEncoding);
    res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json' });
    res.end(body);
  }

  async blockGet(search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const [arg] = required(search, 'cid');
    const { cid, segments } = contentPath(arg!);
    if (segments.length > 0) throw new KuboCommandError('block/get takes a CID, not a path', KuboErrorCode.Client);
    const block = await readBlock(this.blockstore, cid, signal);
    res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'text/plain', 'x-stream-output': '1' });
    res.end(block);
  }

  /** kubo's `block/stat`: `{"Key","Size"}` of one block. */
  async blockStat(search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const [arg] = required(search, 'cid');
    const { cid, segments } = contentPath(arg!);
    if (segments.length > 0) throw new KuboCommandError('block/stat takes a CID, not a path', KuboErrorCode.Client);
    const block = await readBlock(this.blockstore, cid, signal);
    res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json' });
    res.end(`${JSON.stringify({ Key: cid.toString(), Size: block.length })}\n`);
  }

  async add(search: URLSearchParams, req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const cidVersion = search.get('cid-version') ?? '0';
    if (cidVersion !== '0' && cidVersion !== '1') throw new KuboCommandError(`unknown CID version ${cidVersion}`);
    const chunker = search.get('chunker') ?? `size-${KUBO_CHUNK_SIZE}`;
    const sized = /^size-([0-9]{1,9})$/.exec(chunker);
    if (sized === null || Number(sized[1]) === 0) throw new KuboCommandError(`chunker "${chunker}" is not supported by this node (only size-<bytes>)`);
    const hash = search.get('hash') ?? 'sha2-256';
    if (hash !== 'sha2-256') throw new KuboCommandError(`hash "${hash}" is not supported by this node (only sha2-256)`);
    for (const unsupported of ['inline', 'nocopy', 'fscache']) {
      if (boolOption(search.get(unsupported), false)) throw new KuboCommandError(`option "${unsupported}" is not supported by this node`);
    }
    const options = kuboAddOptions({
      cidVersion: cidVersion === '1' ? 1 : 0,
      ...(search.has('raw-leaves') ? { rawLeaves: boolOption(search.get('raw-leaves'), false) } : {}),
      chunkSize: Number(sized[1]),
      trickle: boolOption(search.get('trickle') ?? search.get('t'), false),
      wrapWithDirectory: boolOption(search.get('wrap-with-directory') ?? search.get('w'), false),
    });
    const onlyHash = boolOption(search.get('only-hash') ?? search.get('n'), false);
    const progress = boolOption(search.get('progress') ?? search.get('p'), false);
    const quieter = boolOption(search.get('quieter') ?? search.get('Q'), false);
    const silent = boolOption(search.get('silent'), false);

    let started = false;
    const start = (): void => {
      if (started) return;
      started = true;
      res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json', 'x-chunked-output': '1' });
    };
    const entries = async function* (): AsyncGenerator<{ path: string; content?: AsyncIterable<Uint8Array> }> {
      for await (const entry of uploadEntries(req)) {
        start();
        yield entry.content === undefined ? { path: entry.path } : { path: entry.path, content: entry.content };
      }
    };
    const store = onlyHash ? discardingStore(this.blockstore) : this.blockstore;
    const fs = onlyHash ? unixfs({ blockstore: store }) : this.fs;
    const onProgress = (event: { type: string; detail: unknown }): void => {
      if (event.type !== 'unixfs:importer:progress:file:read' || res.destroyed) return;
      const detail = event.detail as { bytesRead: bigint; path?: string };
      start();
      res.write(`${JSON.stringify({ Name: detail.path ?? '', Bytes: Number(detail.bytesRead) })}\n`);
    };
    const addOptions = { ...options, signal, ...(progress ? { onProgress } : {}) } as Parameters<UnixFS['addAll']>[1];
    const wrapped = options.wrapWithDirectory === true;
    // What kubo pins after an add: the wrapping directory, else each top-level file or directory.
    const roots: CID[] = [];
    try {
      let last: string | undefined;
      for await (const result of fs.addAll(entries(), addOptions)) {
        const hashed = result.cid.toString();
        // Unnamed content is named by its CID; the directory wrapping an upload has no name.
        const unnamed = result.path === undefined || result.path === '';
        const name = unnamed ? (result.unixfs?.type === 'directory' ? '' : hashed) : result.path;
        const line = `${JSON.stringify({ Name: name, Hash: hashed, Size: String(result.size) })}\n`;
        if (wrapped ? name === '' : !(name ?? '').includes('/')) roots.push(result.cid);
        if (silent) continue;
        if (quieter) {
          last = line;
          continue;
        }
        if (!(await write(res, line))) return;
      }
      if (!started) throw new KuboCommandError('no file in the upload: send multipart/form-data with a file part', KuboErrorCode.Client);
      if (!onlyHash && boolOption(search.get('pin'), true)) await this.pins?.pinRoots(roots);
      if (last !== undefined && !silent) await write(res, last);
      res.end();
    } catch (error) {
      if (!started) throw error;
      endWithStreamError(res, (error as Error).message);
    }
  }

  #decode(cid: CID, block: Uint8Array): ReturnType<typeof decodeDagPb> {
    try {
      return decodeDagPb(cid, block);
    } catch (error) {
      throw new KuboCommandError((error as Error).message);
    }
  }
}

/** A blockstore for `only-hash`: computes CIDs, keeps nothing. */
function discardingStore(real: Blockstore): Pick<Blockstore, 'get' | 'put' | 'has'> {
  return {
    put: async (cid: CID) => cid,
    has: async () => false,
    get: (cid, options) => real.get(cid, options),
  };
}

/**
 * Starts an embedded IPFS node: `@helia/unixfs` over a `blockstore-fs` directory (so content survives
 * restarts), no libp2p networking, serving kubo's HTTP RPC for `add`, `cat`, `get`, `object/get`,
 * `block/get`, `block/stat`, `block/put`, `dag/put`, `dag/get`, `dag/resolve`, `dag/import` and
 * `version` on a loopback port. `add` defaults give kubo's CIDs (`"hello world\n"` →
 * `QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o`).
 *
 * @example
 * ```ts
 * const node = await startIpfsNode({ dataDir: '.data/ipfs/default' });
 * // curl -X POST "$URL/api/v0/cat?arg=QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o"
 * await node.stop();
 * ```
 */
export async function startIpfsNode(options: IpfsNodeOptions): Promise<IpfsNode> {
  const blockstore = new FsBlockstore(options.dataDir);
  // An existing directory is checked now; a missing one is created by the first block written, so a
  // node nobody adds to leaves nothing behind.
  if (existsSync(options.dataDir)) await blockstore.open();
  const fs = unixfs({ blockstore });
  const pins = await NodePins.open(options.dataDir, blockstore);
  const commands = new Commands(blockstore, fs, options.objectGet ?? true, pins);
  const inFlight = new Set<AbortController>();
  const sockets = new Set<Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://node');
    const command = url.pathname.startsWith('/api/v0/') ? url.pathname.slice('/api/v0/'.length) : undefined;
    const known = (command !== undefined && NODE_COMMANDS.has(command)) || (command?.startsWith('object/') === true && !(options.objectGet ?? true));
    if (!known && !pins.serves(command)) return sendText(res, 404, '404 page not found\n');
    if (req.method !== 'POST') return sendText(res, 405, '405 - Method Not Allowed\n', { allow: 'OPTIONS, POST' });
    if (!UPLOAD_COMMANDS.has(command!)) req.resume();
    const abort = new AbortController();
    // The importer and exporter listen on the signal once per block in flight.
    setMaxListeners(0, abort.signal);
    inFlight.add(abort);
    res.once('close', () => abort.abort());
    try {
      if (pins.serves(command)) return await pins.serve(command!, url.searchParams, res, abort.signal);
      switch (command) {
        case 'version': return await commands.version(url.searchParams, res);
        case 'cat': return await commands.cat(url.searchParams, res, abort.signal);
        case 'block/get': return await commands.blockGet(url.searchParams, res, abort.signal);
        case 'block/stat': return await commands.blockStat(url.searchParams, res, abort.signal);
        case 'add': return await commands.add(url.searchParams, req, res, abort.signal);
        case 'block/put': return await blockPut(blockstore, url.searchParams, req, res, abort.signal, pins);
        case 'dag/put': return await dagPut(blockstore, url.searchParams, req, res, abort.signal, pins);
        case 'dag/get': return await dagGet(blockstore, url.searchParams, res, abort.signal);
        case 'dag/resolve': return await dagResolve(blockstore, url.searchParams, res, abort.signal);
        case 'dag/import': return await dagImport(blockstore, url.searchParams, req, res, abort.signal, pins);
        case 'get': return await get(blockstore, url.searchParams, res, abort.signal);
        default: return await commands.objectGetCommand(url.searchParams, res, abort.signal);
      }
    } catch (error) {
      if (res.headersSent) return endWithStreamError(res, (error as Error).message);
      if (res.destroyed) return;
      if (error instanceof KuboCommandError) return sendKuboError(res, error.message, error.code);
      return sendKuboError(res, (error as Error).message ?? String(error));
    } finally {
      inFlight.delete(abort);
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await blockstore.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    dataDir: options.dataDir,
    blockstore,
    fs,
    add: (content) => fs.addByteStream(content as AsyncIterable<Uint8Array>, kuboAddOptions() as Parameters<UnixFS['addByteStream']>[1]),
    stop() {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const abort of inFlight) abort.abort();
        for (const socket of sockets) socket.destroy();
        await closed;
        await blockstore.close();
      })();
      return stopping;
    },
  };
}
