import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The dashboard session cookie's name. */
export const SESSION_COOKIE = 'tollgate_admin';

/** The header the dashboard's own requests carry; a request authenticated by the cookie alone must have it. */
export const DASHBOARD_HEADER = 'x-tollgate-dashboard';

/** How long a dashboard session lasts after sign-in, in ms (12 hours). */
export const SESSION_MS = 12 * 3_600_000;

/** Most signed-out sessions remembered (each until it would have expired). */
const MAX_SIGNED_OUT = 10_000;

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Wrong sign-ins one source may make at once. */
export const SIGN_IN_BURST = 5;
/** Then one wrong sign-in per this many ms. */
export const SIGN_IN_EVERY_MS = 6_000;
/** Sources whose attempts are remembered, at most (the oldest is forgotten first). */
const MAX_SOURCES = 10_000;

/**
 * Dashboard sign-ins: the admin token is checked once, at sign-in, and the browser then holds a session
 * id in an HttpOnly, SameSite=Strict cookie scoped to the dashboard and the API, never the token itself.
 * A session id is its expiry and a random nonce, signed with HMAC-SHA256 under a key derived from the
 * admin token: every process that has the token (each worker of `--workers n`, each instance behind a
 * balancer, a restarted one) accepts it, and changing the admin token signs everyone out. Signing out
 * clears the cookie and refuses that id in this process until it expires.
 */
export class DashboardSessions {
  readonly #token: Buffer;
  readonly #signingKey: Buffer;
  readonly #now: () => number;
  readonly #signedOut = new Map<string, number>();
  /** Sign-in attempts left per source address. */
  readonly #attempts = new Map<string, { tokens: number; at: number }>();

  constructor(token: string, now: () => number) {
    this.#token = digest(token);
    this.#signingKey = createHash('sha256').update('tollgate dashboard session\0').update(token).digest();
    this.#now = now;
  }

  /**
   * How long `source` (an address) must wait before its next sign-in: 0 when it may try now. Wrong
   * tokens are limited per source to five at once, then one every six seconds
   * (a typed token needs no more; a guessed one gets nowhere); right ones are never held back.
   */
  signInWait(source: string): number {
    const bucket = this.#refill(source);
    return bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) * SIGN_IN_EVERY_MS);
  }

  /** Counts a wrong token from `source` against its sign-ins. */
  signInFailed(source: string): void {
    this.#refill(source).tokens -= 1;
  }

  #refill(source: string): { tokens: number; at: number } {
    const now = this.#now();
    let bucket = this.#attempts.get(source);
    if (bucket === undefined) {
      if (this.#attempts.size >= MAX_SOURCES) this.#attempts.delete(this.#attempts.keys().next().value!);
      bucket = { tokens: SIGN_IN_BURST, at: now };
      this.#attempts.set(source, bucket);
    }
    bucket.tokens = Math.min(SIGN_IN_BURST, bucket.tokens + (now - bucket.at) / SIGN_IN_EVERY_MS);
    bucket.at = now;
    return bucket;
  }

  /** Whether `token` is the admin token (constant-time comparison of digests). */
  tokenMatches(token: string): boolean {
    return timingSafeEqual(digest(token), this.#token);
  }

  /** Starts a session; returns its id, for the cookie. */
  open(): string {
    const body = `${(this.#now() + SESSION_MS).toString(36)}.${randomBytes(18).toString('base64url')}`;
    return `${body}.${this.#sign(body)}`;
  }

  /** Ends the request's session, if it has one. */
  close(req: IncomingMessage): void {
    const id = sessionIdOf(req);
    const until = id === undefined ? undefined : this.#expiryOf(id);
    if (until === undefined) return;
    this.#signedOut.set(digest(id!).toString('base64'), until);
    if (this.#signedOut.size > MAX_SIGNED_OUT) this.#signedOut.delete(this.#signedOut.keys().next().value!);
  }

  /** Whether the request carries the cookie of a live session. */
  valid(req: IncomingMessage): boolean {
    const id = sessionIdOf(req);
    const until = id === undefined ? undefined : this.#expiryOf(id);
    if (until === undefined || until <= this.#now()) return false;
    const key = digest(id!).toString('base64');
    const signedOut = this.#signedOut.get(key);
    if (signedOut === undefined) return true;
    if (signedOut <= this.#now()) this.#signedOut.delete(key);
    return false;
  }

  /** The `Set-Cookie` value for session `id` (or, without one, the value that clears the cookie), scoped to `path`. */
  cookie(id: string | undefined, path: string, secure: boolean): string {
    const parts = [`${SESSION_COOKIE}=${id ?? ''}`, `Path=${path}`, 'HttpOnly', 'SameSite=Strict', `Max-Age=${id === undefined ? 0 : SESSION_MS / 1000}`];
    if (secure) parts.push('Secure');
    return parts.join('; ');
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#signingKey).update(body).digest('base64url');
  }

  /** The expiry of a well-signed id (ms), or undefined for anything else. */
  #expiryOf(id: string): number | undefined {
    const dot = id.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const given = Buffer.from(id.slice(dot + 1));
    const expected = Buffer.from(this.#sign(id.slice(0, dot)));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const until = Number.parseInt(id.slice(0, id.indexOf('.')), 36);
    return Number.isSafeInteger(until) ? until : undefined;
  }
}

function sessionIdOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === SESSION_COOKIE && value !== undefined && value !== '') return value;
  }
  return undefined;
}
