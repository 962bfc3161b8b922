import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The dashboard session cookie's name. */
export const SESSION_COOKIE = 'tollgate_admin';

/** The header the dashboard's own requests carry; a request authenticated by the cookie alone must have it. */
export const DASHBOARD_HEADER = 'x-tollgate-dashboard';

/** How long a dashboard session lasts after sign-in, in ms (12 hours). */
export const SESSION_MS = 12 * 3_600_000;

const MAX_SESSIONS = 1_000;

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
 * Dashboard sign-ins: the admin token is checked once, at sign-in, and the browser then holds a random
 * session id in an HttpOnly, SameSite=Strict cookie scoped to the dashboard and the API, never the
 * token itself. Sessions live in this process's memory (a restart signs everyone out) and only their
 * SHA-256 is kept.
 */
export class DashboardSessions {
  readonly #token: Buffer;
  readonly #now: () => number;
  readonly #sessions = new Map<string, number>();
  /** Sign-in attempts left per source address. */
  readonly #attempts = new Map<string, { tokens: number; at: number }>();

  constructor(token: string, now: () => number) {
    this.#token = digest(token);
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
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(digest(id).toString('base64'), this.#now() + SESSION_MS);
    if (this.#sessions.size > MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    return id;
  }

  /** Ends the request's session, if it has one. */
  close(req: IncomingMessage): void {
    const id = sessionIdOf(req);
    if (id !== undefined) this.#sessions.delete(digest(id).toString('base64'));
  }

  /** Whether the request carries the cookie of a live session. */
  valid(req: IncomingMessage): boolean {
    const id = sessionIdOf(req);
    if (id === undefined) return false;
    const key = digest(id).toString('base64');
    const until = this.#sessions.get(key);
    if (until === undefined) return false;
    if (until <= this.#now()) {
      this.#sessions.delete(key);
      return false;
    }
    return true;
  }

  /** The `Set-Cookie` value for session `id` (or, without one, the value that clears the cookie), scoped to `path`. */
  cookie(id: string | undefined, path: string, secure: boolean): string {
    const parts = [`${SESSION_COOKIE}=${id ?? ''}`, `Path=${path}`, 'HttpOnly', 'SameSite=Strict', `Max-Age=${id === undefined ? 0 : SESSION_MS / 1000}`];
    if (secure) parts.push('Secure');
    return parts.join('; ');
  }
}

function sessionIdOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === SESSION_COOKIE && value !== undefined && value !== '') return value;
  }
  return undefined;
}
