import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { KuboErrorCode } from 'tollgate/plugins/ipfs';
import { KuboCommandError } from './ipfs-wire.js';

/** One part of an `add` upload: a file with its content stream, or a directory. */
export interface UploadEntry {
  /** The path the client gave (`filename`, URL-decoded); empty for unnamed content. */
  readonly path: string;
  /** The file's bytes; absent for a directory (`Content-Type: application/x-directory`). */
  readonly content?: Readable;
}

function decodePath(filename: string): string {
  try {
    return decodeURIComponent(filename);
  } catch {
    return filename;
  }
}

/**
 * The parts of a `multipart/form-data` upload, as kubo's `add` reads them (kubo-rpc-client sends
 * `file`, `file-1`... and `dir` parts whose `filename` is the URL-encoded path), one at a time: the next
 * part is parsed only once the previous file's content was read, so memory stays flat whatever the
 * size, and the request is paused while the importer is busy.
 */
export async function* uploadEntries(req: IncomingMessage): AsyncGenerator<UploadEntry> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, preservePath: true, defParamCharset: 'utf8' });
  } catch (error) {
    throw new KuboCommandError(`invalid multipart upload: ${(error as Error).message}`, KuboErrorCode.Client);
  }
  const queue: Array<UploadEntry | Error | null> = [];
  let wake: (() => void) | undefined;
  const push = (item: UploadEntry | Error | null): void => {
    queue.push(item);
    wake?.();
  };
  parser.on('file', (field, stream, info) => {
    const path = decodePath(info.filename ?? '');
    if (info.mimeType === 'application/x-directory' || field === 'dir' || field.startsWith('dir-') || field.startsWith('dir?')) {
      stream.resume();
      push({ path });
    } else {
      push({ path, content: stream });
    }
  });
  parser.on('field', () => { /* kubo reads files only */ });
  parser.once('close', () => push(null));
  parser.once('error', (error: Error) => push(new KuboCommandError(`invalid multipart upload: ${error.message}`, KuboErrorCode.Client)));
  req.once('error', (error: Error) => push(error));
  req.pipe(parser);
  try {
    for (;;) {
      if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const item = queue.shift()!;
      if (item === null) return;
      if (item instanceof Error) throw item;
      yield item;
    }
  } finally {
    req.unpipe(parser);
    parser.removeAllListeners('file');
    parser.on('error', () => {});
    parser.destroy();
  }
}

/**
 * The whole content of one uploaded file, refused with kubo's client error once it passes `limit` bytes
 * (a block or a DAG node is held in memory: the bound keeps a devnet node's memory small).
 */
export async function readWhole(content: AsyncIterable<Uint8Array>, limit: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of content) {
    size += chunk.length;
    if (size > limit) throw new KuboCommandError(`${what} is over this node's limit of ${limit} bytes`, KuboErrorCode.Client);
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(chunks, size);
}
