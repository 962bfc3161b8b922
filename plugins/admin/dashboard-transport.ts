import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientAddress, type GatewayRuntime, type Transport } from '../../core/transport-api.js';
import { loadDashboardAssets, type DashboardAsset } from './dashboard-assets.js';
import type { DashboardSessions } from './dashboard-sessions.js';

/**
 * The page keeps the admin token in memory and sends it to the API itself; these headers keep the page
 * from loading anything but its own files, from being framed, and from leaking its URL.
 */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

const MAX_FORM_BYTES = 4096;

function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_FORM_BYTES) chunks.push(chunk);
    });
    req.on('error', () => resolve(undefined));
    req.on('end', () => resolve(size > MAX_FORM_BYTES ? undefined : new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
  });
}

/** Whether the client reached the gateway over TLS (itself, or a proxy that says so), so the cookie gets `Secure`. */
function overTls(req: IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true || req.headers['x-forwarded-proto'] === 'https';
}

/**
 * Serves the dashboard under `path`: its files (`/admin/` and `/admin/<file>`), which hold no data, and
 * sign-in: `POST /admin/session` with the admin token as a form field checks it and sets an HttpOnly,
 * SameSite=Strict session cookie (see {@link DashboardSessions}); `GET /admin/session` says whether the
 * browser is signed in; `POST /admin/session/end` signs out. Sign-in answers are redirects back to the
 * page (with `?signin=failed` for a wrong token), so a browser never sees an error status for it.
 */
export class DashboardTransport implements Transport {
  readonly name = 'admin-dashboard';
  /** An operator route: on `server.adminListen` when the config sets one, off the public port. */
  readonly operator = true;
  readonly #path: string;
  readonly #apiPrefix: string;
  readonly #sessions: DashboardSessions;
  readonly #cookiePath: string;
  #assets: ReadonlyMap<string, DashboardAsset> | undefined;

  /** `cookiePath` covers both the dashboard and the API. */
  constructor(options: { path: string; apiPrefix: string; sessions: DashboardSessions; cookiePath: string }) {
    this.#path = options.path;
    this.#apiPrefix = options.apiPrefix;
    this.#sessions = options.sessions;
    this.#cookiePath = options.cookiePath;
  }

  /** Reads the files (once); the plugin calls it in `start`, so a missing file stops the gateway from starting. */
  load(): void {
    this.#assets ??= loadDashboardAssets(this.#apiPrefix);
  }

  handleRequest(req: IncomingMessage, res: ServerResponse, gateway?: GatewayRuntime): boolean {
    const pathname = new URL(req.url ?? '/', 'http://dashboard.invalid').pathname;
    if (pathname === this.#path) {
      res.writeHead(308, { location: `${this.#path}/` }).end();
      return true;
    }
    if (!pathname.startsWith(`${this.#path}/`)) return false;
    const name = pathname.slice(this.#path.length + 1) || 'index.html';
    if (name === 'session' || name === 'session/end') {
      this.#session(req, res, name === 'session/end', gateway);
      return true;
    }
    this.load();
    const asset = this.#assets!.get(name);
    // Other paths under the dashboard's (the admin API's prefix, for one) belong to other transports.
    if (asset === undefined) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return true;
    }
    res.writeHead(200, { ...PAGE_HEADERS, 'content-type': asset.type, 'content-length': asset.body.length });
    res.end(req.method === 'HEAD' ? undefined : asset.body);
    return true;
  }

  #session(req: IncomingMessage, res: ServerResponse, end: boolean, gateway: GatewayRuntime | undefined): void {
    const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
    if (req.method === 'GET' && !end) {
      const body = JSON.stringify({ signedIn: this.#sessions.valid(req) });
      res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(body);
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      res.writeHead(405, { ...headers, allow: end ? 'POST' : 'GET, POST' }).end();
      return;
    }
    const page = `${this.#path}/`;
    if (end) {
      req.resume();
      this.#sessions.close(req);
      res.writeHead(303, { ...headers, location: page, 'set-cookie': this.#sessions.cookie(undefined, this.#cookiePath, overTls(req)) }).end();
      return;
    }
    // Sign-ins are throttled per source address, so the token cannot be guessed at speed; each refusal is logged (never the token).
    const source = (gateway === undefined ? req.socket.remoteAddress : clientAddress(req, gateway.config.server.trustedProxies)) ?? '';
    const wait = this.#sessions.signInWait(source);
    if (wait > 0) {
      req.resume();
      gateway?.logger.warn({ source, retryAfterMs: wait }, 'dashboard sign-in throttled');
      res.writeHead(429, { ...headers, 'retry-after': String(Math.ceil(wait / 1000)) }).end();
      return;
    }
    void readForm(req).then((form) => {
      const token = form?.get('token') ?? '';
      if (!this.#sessions.tokenMatches(token)) {
        this.#sessions.signInFailed(source);
        gateway?.logger.warn({ source }, 'dashboard sign-in refused: wrong token');
        res.writeHead(303, { ...headers, location: `${page}?signin=failed` }).end();
        return;
      }
      const id = this.#sessions.open();
      res.writeHead(303, { ...headers, location: page, 'set-cookie': this.#sessions.cookie(id, this.#cookiePath, overTls(req)) }).end();
    });
  }
}
