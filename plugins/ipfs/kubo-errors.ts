import type { UpstreamReply } from '../../core/plugin-api.js';

/** kubo's error codes (go-ipfs-cmds): the `Code` of an error body. */
export const KuboErrorCode = Object.freeze({
  /** A failure of the command (HTTP 500). */
  Normal: 0,
  /** The client's request is wrong (HTTP 400). */
  Client: 1,
  /** A bug in the node. */
  Implementation: 2,
  /** Too many requests (HTTP 429). */
  RateLimited: 3,
  /** Not allowed (HTTP 403). */
  Forbidden: 4,
});

/** kubo's error body: `{"Message":"...","Code":0,"Type":"error"}` and a newline, as go-ipfs-cmds writes it. */
export function kuboErrorBody(message: string, code: number): string {
  return `${JSON.stringify({ Message: message, Code: code, Type: 'error' })}\n`;
}

/** An answer as kubo gives it for a command that failed before any output: HTTP 500 (or `status`) and the JSON error body. */
export function kuboErrorReply(message: string, code: number = KuboErrorCode.Normal, status = 500): UpstreamReply {
  return { status, headers: { 'content-type': 'application/json' }, body: Buffer.from(kuboErrorBody(message, code)) };
}

/** The `Message` of a kubo error body, if `body` is one. */
export function kuboErrorMessage(body: Uint8Array): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as { Message?: unknown };
    return typeof parsed.Message === 'string' ? parsed.Message : undefined;
  } catch {
    return undefined;
  }
}
