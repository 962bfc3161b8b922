import type { ServerResponse } from 'node:http';
import { kuboErrorBody, KuboErrorCode } from 'tollgate/plugins/ipfs';

/** A command that failed before any output: answered as kubo does, with HTTP 500 (or 400) and the JSON error body. */
export class KuboCommandError extends Error {
  /** kubo's error code: `Normal` (HTTP 500) or `Client` (HTTP 400). */
  readonly code: number;
  constructor(message: string, code: number = KuboErrorCode.Normal) {
    super(message);
    this.name = 'KuboCommandError';
    this.code = code;
  }
}

/** Headers kubo sends on every answer that is not an error. */
export const KUBO_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-headers': 'X-Stream-Output, X-Chunked-Output, X-Content-Length',
  'access-control-expose-headers': 'X-Stream-Output, X-Chunked-Output, X-Content-Length',
  trailer: 'X-Stream-Error',
  vary: 'Origin',
});

/** Answers an error as kubo's HTTP RPC does before any output: 400 for client errors, else 500, and `{"Message","Code","Type"}`. */
export function sendKuboError(res: ServerResponse, message: string, code: number = KuboErrorCode.Normal): void {
  const body = kuboErrorBody(message, code);
  res.writeHead(code === KuboErrorCode.Client ? 400 : 500, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), vary: 'Origin' });
  res.end(body);
}

/** Answers plain text (kubo's 404 and 405 come from Go's `http.Error`). */
export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** Bytes a streamed answer may queue for a slow client before the node waits (so reading the next block overlaps sending). */
export const WRITE_WINDOW = 1 << 20;

/** Writes `chunk`, waiting while more than {@link WRITE_WINDOW} bytes wait for the client; false when the client went away. */
export async function write(res: ServerResponse, chunk: Uint8Array | string): Promise<boolean> {
  if (res.destroyed) return false;
  res.write(chunk);
  if (res.writableLength < WRITE_WINDOW) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** Ends a streamed answer that failed after it began, with the error in the `X-Stream-Error` trailer. */
export function endWithStreamError(res: ServerResponse, message: string): void {
  if (res.destroyed || res.writableEnded) return;
  res.addTrailers({ 'X-Stream-Error': message.replace(/[\x00-\x1f\x7f]+/g, ' ') });
  res.end();
}

/** Reads a Go-style boolean option (`true`, `1`, `t`...; an empty value means true). */
export function boolOption(value: string | null | undefined, fallback: boolean): boolean {
  if (value === null || value === undefined) return fallback;
  if (/^(|1|t|T|TRUE|true|True)$/.test(value)) return true;
  if (/^(0|f|F|FALSE|false|False)$/.test(value)) return false;
  throw new KuboCommandError(`invalid boolean value "${value}"`, KuboErrorCode.Client);
}

/** Reads an int64 option, as kubo's option parsing does. */
export function intOption(name: string, value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (!/^[+-]?[0-9]{1,18}$/.test(value)) throw new KuboCommandError(`invalid value "${value}" for option "${name}": not an integer`, KuboErrorCode.Client);
  return Number(value);
}
