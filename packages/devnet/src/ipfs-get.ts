import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { constants as zlib, createGzip } from 'node:zlib';
import * as dagPb from '@ipld/dag-pb';
import type { Blockstore } from 'interface-blockstore';
import { exporter, type UnixFSEntry } from 'ipfs-unixfs-exporter';
import { Header, Pax } from 'tar';
import { KuboErrorCode, parseContentPath } from 'tollgate/plugins/ipfs';
import { isNotFound, notFoundMessage } from './ipfs-ipld.js';
import { boolOption, endWithStreamError, intOption, KUBO_HEADERS, KuboCommandError, write } from './ipfs-wire.js';

/** Bytes of a file `get` asks the exporter for at a time (it reads a whole range ahead, whatever the reader takes). */
const READ_WINDOW_BYTES = 4 * 1024 * 1024;

/** What one tar entry needs. */
interface EntryHeader {
  readonly path: string;
  readonly type: 'File' | 'Directory' | 'SymbolicLink';
  readonly size: number;
  readonly mode: number;
  readonly mtime: Date;
  readonly linkpath?: string;
}

/**
 * One tar header as Go's `archive/tar` writes kubo's (`boxo/files.TarWriter`): ustar, the name as given
 * (a directory's without a trailing slash), uid and gid 0; a PAX record first only for what ustar cannot hold.
 */
function tarHeader(entry: EntryHeader): Buffer {
  const block = Buffer.alloc(512);
  const fields = { path: entry.path, type: entry.type, size: entry.size, mode: entry.mode, mtime: entry.mtime, uid: 0, gid: 0, uname: '', gname: '', ...(entry.linkpath === undefined ? {} : { linkpath: entry.linkpath }) };
  const needPax = new Header(fields).encode(block);
  return needPax ? Buffer.concat([new Pax(fields).encode(), block]) : block;
}

function padding(size: number): Buffer {
  return Buffer.alloc((512 - (size % 512)) % 512);
}

/** The entry's modification time (its UnixFS `mtime`, else now, as kubo) and permissions (its mode's, else 0644 / 0755). */
function metadata(entry: UnixFSEntry, directory: boolean): { mode: number; mtime: Date } {
  const unixfs = entry.type === 'file' || entry.type === 'directory' ? entry.unixfs : undefined;
  const perms = (unixfs?.mode ?? 0) & 0o7777;
  const mtime = unixfs?.mtime as { secs: bigint; nsecs?: number } | undefined;
  return {
    mode: perms !== 0 ? perms : directory ? 0o755 : 0o644,
    mtime: mtime === undefined ? new Date() : new Date(Number(mtime.secs) * 1000 + Math.floor((mtime.nsecs ?? 0) / 1e6)),
  };
}

/** Bytes of a file entry, one window at a time. */
async function* fileBytes(entry: UnixFSEntry, size: number, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  if (entry.type === 'directory' || entry.type === 'object') return;
  for (let at = 0; at < size; at += READ_WINDOW_BYTES) {
    yield* entry.content({ offset: at, length: Math.min(READ_WINDOW_BYTES, size - at), signal });
  }
}

function fileSize(entry: UnixFSEntry): number {
  return entry.type === 'file' ? Number(entry.unixfs.fileSize()) : entry.type === 'raw' || entry.type === 'identity' ? entry.node.length : 0;
}

/** kubo's size of what `get` sends (`X-Content-Length`): a file's bytes, or a directory's DAG size (its block and its links' sizes). */
function contentLength(entry: UnixFSEntry): number {
  if (entry.type !== 'directory') return fileSize(entry);
  return dagPb.encode(entry.node).length + entry.node.Links.reduce((sum, link) => sum + (link.Tsize ?? 0), 0);
}

/** The tar stream of `entry` under `path`, directories depth first in link order, as `TarWriter.WriteFile` walks them. */
async function* tarEntries(blockstore: Blockstore, entry: UnixFSEntry, path: string, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  if (entry.type === 'object') throw new Error(`cannot get a ${entry.cid.toString()}: not a UnixFS node`);
  if (entry.type === 'directory') {
    yield tarHeader({ path, type: 'Directory', size: 0, ...metadata(entry, true) });
    for await (const child of entry.entries({ signal })) {
      yield* tarEntries(blockstore, await exporter(child.cid, blockstore, { signal }), `${path}/${child.name}`, signal);
    }
    return;
  }
  if (entry.type === 'file' && entry.unixfs.type === 'symlink') {
    const target = Buffer.from(entry.unixfs.data ?? new Uint8Array()).toString('utf8');
    yield tarHeader({ path, type: 'SymbolicLink', size: 0, linkpath: target, mode: 0o777, mtime: metadata(entry, false).mtime });
    return;
  }
  const size = fileSize(entry);
  yield tarHeader({ path, type: 'File', size, ...metadata(entry, false) });
  yield* fileBytes(entry, size, signal);
  yield padding(size);
}

async function* tarArchive(blockstore: Blockstore, root: UnixFSEntry, name: string, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  yield* tarEntries(blockstore, root, name, signal);
  // The end of an archive: two zero blocks (Go's tar.Writer pads no further).
  yield Buffer.alloc(1024);
}

/** kubo's `compress` and `compression-level`: gzip's level, or undefined for none. */
function compression(search: URLSearchParams): number | undefined {
  if (!boolOption(search.get('compress') ?? search.get('C'), false)) return undefined;
  const level = intOption('compression-level', search.get('compression-level') ?? search.get('l'));
  if (level === undefined) return zlib.Z_DEFAULT_COMPRESSION;
  if (level < 1 || level > 9) throw new KuboCommandError('compression level must be between 1 and 9');
  return level;
}

/**
 * kubo's `get`: a file or a directory (with everything under it) as a tar stream (`application/x-tar`,
 * `X-Stream-Output: 1`, `X-Content-Length` as kubo reckons it), the root named after the path's last
 * part; `compress` gzips it (a file alone unless `archive`).
 */
export async function get(blockstore: Blockstore, search: URLSearchParams, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const args = search.getAll('arg');
  if (args.length === 0) throw new KuboCommandError('argument "ipfs-path" is required', KuboErrorCode.Client);
  if (args.length > 1) throw new KuboCommandError(`expected 1 argument "ipfs-path", got ${args.length}`, KuboErrorCode.Client);
  const arg = args[0]!;
  const level = compression(search);
  const archive = boolOption(search.get('archive') ?? search.get('a'), false);
  boolOption(search.get('progress') ?? search.get('p'), false);
  let path;
  try {
    path = parseContentPath(arg);
  } catch (error) {
    throw new KuboCommandError((error as Error).message);
  }
  let root: UnixFSEntry;
  try {
    root = await exporter(`${path.cid.toString()}${path.segments.map((s) => `/${s}`).join('')}`, blockstore, { signal });
  } catch (error) {
    if (isNotFound(error)) throw new KuboCommandError(notFoundMessage(path.cid));
    throw new KuboCommandError((error as Error).message);
  }
  const name = arg.replace(/\/+$/, '').split('/').pop()!;
  const plain = level !== undefined && !archive;
  if (plain && root.type === 'directory') throw new KuboCommandError('file is not regular');
  let source: AsyncIterable<Uint8Array> = plain ? fileBytes(root, fileSize(root), signal) : tarArchive(blockstore, root, name, signal);
  if (level !== undefined) source = Readable.from(source).pipe(createGzip({ level }));
  res.writeHead(200, { ...KUBO_HEADERS, 'content-type': level === undefined ? 'application/x-tar' : 'application/gzip', 'x-stream-output': '1', 'x-content-length': String(contentLength(root)) });
  try {
    for await (const chunk of source) {
      if (!(await write(res, chunk))) return;
    }
    res.end();
  } catch (error) {
    endWithStreamError(res, isNotFound(error) ? 'block was not found locally (offline)' : (error as Error).message);
  }
}
