import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { KeyRegistryToken, PlanRegistryToken, type KeyRegistry, type PlanRegistry } from '../../core/store-api.js';
import { KeySettingsSectionToken, Tokens } from '../../core/plugin-api.js';
import { continueBody, refuseBody, type GatewayRuntime, type Transport } from '../../core/transport-api.js';
import { type UpstreamStatus } from '../../core/upstream-api.js';
import { KeyManager, KeyManagerError } from './key-manager.js';
import { PlanManager, type PlanInput, type PlanView } from './plan-manager.js';
import { usageExport, type UsageExport } from './usage-export.js';
import type { ResolvedAdminSettings } from './settings.js';
import type { TrafficRecorder } from './traffic-recorder.js';
import { DASHBOARD_HEADER, type DashboardSessions } from './dashboard-sessions.js';
import { reloadConfig } from './config-reload-route.js';
// The token only (this file loads nothing else): the file API's plans, when the ipfs plugin runs.
import { PlanStorageBytesToken } from '../ipfs/storage-allowance.js';
import { listPayments, PaymentJournalKey, WALLET_PATTERN, type PaymentLister } from './payment-list.js';

/** An admin API error: a stable code and a message, answered as `{ "error": { code, message } }`. */
class AdminError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Deepest nesting a body may have: deeper ones would exhaust the stack of whatever walks them (settings checks, stores). */
const MAX_DEPTH = 32;

/** How deeply `value` nests (a scalar: 0), counting no further than one past `MAX_DEPTH`. */
function depthOf(value: unknown, depth = 0): number {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return depth;
  let deepest = depth + 1;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child, depth + 1));
  return deepest;
}

/** A path segment, percent-decoded; a malformed escape (`%E0%A4%A`) is the client's error. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new AdminError(400, 'bad_request', 'the path holds a malformed percent-escape');
  }
}

/**
 * Reads a JSON object body of at most `limit` bytes. A declared length over the limit is refused before
 * the client is told to send its body (`100 Continue`); a body that grows past it stops being collected
 * (the refusal drains the rest).
 */
function readJson(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Record<string, unknown>> {
  const tooLarge = (): AdminError => new AdminError(413, 'too_large', `request body exceeds ${limit} bytes`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge());
  continueBody(req, res);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.off('end', onEnd);
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (text === '') return resolve({});
      try {
        const parsed = JSON.parse(text) as unknown;
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        if (depthOf(parsed) > MAX_DEPTH) return reject(new AdminError(400, 'bad_request', `the body nests deeper than ${MAX_DEPTH} levels`));
        resolve(parsed as Record<string, unknown>);
      } catch {
        reject(new AdminError(400, 'bad_request', 'the body must be a JSON object'));
      }
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', reject);
  });
}

function optionalString(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new AdminError(400, 'bad_request', `${name}: must be a non-empty string`);
  return value;
}

/** The plan fields of a body (their types are checked by the plan manager, with every problem at once). */
function planInput(body: Record<string, unknown>): PlanInput {
  return {
    ...(body.dailyCredits === undefined ? {} : { dailyCredits: body.dailyCredits as number }),
    ...(body.creditsPerSecond === undefined ? {} : { creditsPerSecond: body.creditsPerSecond as number }),
    ...(body.failover === undefined ? {} : { failover: body.failover as boolean }),
  };
}

/** Plans by name, as `GET /plans` answers them. */
function plansByName(plans: readonly PlanView[]): Record<string, Omit<PlanView, 'name'>> {
  return Object.fromEntries(plans.map(({ name, ...plan }) => [name, plan]));
}

/** The `limit` query parameter of a payment list: 1 to 1,000, default 100. */
function paymentLimit(query: URLSearchParams): number {
  const text = query.get('limit');
  if (text === null) return 100;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) throw new AdminError(400, 'bad_request', 'limit: must be an integer from 1 to 1000');
  return limit;
}

/** What a route answers: a JSON body, or a usage export streamed as it is read. */
type AdminAnswer = { status: number; body: unknown } | { status: 200; export: UsageExport };

function optionalObject(body: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AdminError(400, 'bad_request', `${name}: must be an object`);
  return value as Record<string, unknown>;
}

/**
 * The admin HTTP API under a path prefix (default `/admin/v1`), for operators: keys (create, list,
 * rotate, revoke, plan, settings sections such as `security`), usage per key, day and method, plans
 * (the config's, and managed ones: create, change, delete), a usage export of every key for a range of
 * days (CSV or JSON, streamed), x402 payments by key and by wallet (with the payments plugin), and upstream status. Every request needs
 * `Authorization: Bearer <token>`, compared in constant time; without it the answer is 401 and nothing
 * else is revealed. Answers are JSON and never cached.
 */
export class AdminTransport implements Transport {
  readonly name = 'admin';
  /** An operator route: on `server.adminListen` when the config sets one, off the public port. */
  readonly operator = true;
  readonly #settings: ResolvedAdminSettings;
  readonly #token: Buffer;
  #manager: KeyManager | undefined;

  readonly #traffic: TrafficRecorder | undefined;
  readonly #sessions: DashboardSessions | undefined;

  /** `traffic` answers `/keys/:id/traffic`; `sessions` lets the dashboard's signed-in browsers in. */
  constructor(settings: ResolvedAdminSettings & { token: string }, options: { traffic?: TrafficRecorder; sessions?: DashboardSessions } = {}) {
    this.#settings = settings;
    this.#traffic = options.traffic;
    this.#sessions = options.sessions;
    this.#token = digest(settings.token);
  }

  handleRequest(req: IncomingMessage, res: ServerResponse, gateway: GatewayRuntime): boolean {
    const url = new URL(req.url ?? '/', 'http://admin.invalid');
    const prefix = this.#settings.prefix;
    if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return false;
    const path = url.pathname.slice(prefix.length).replace(/\/$/, '') || '/';
    this.#handle(req, res, path, url.searchParams, gateway).then(
      (answer) => ('export' in answer ? this.#stream(res, answer.export, gateway) : this.#send(res, answer.status, answer.body)),
      (error: unknown) => {
        if (error instanceof AdminError && error.status === 413) {
          return refuseBody(req, res, 413, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }, JSON.stringify({ error: { code: error.code, message: error.message } }));
        }
        if (error instanceof AdminError) return this.#send(res, error.status, { error: { code: error.code, message: error.message } }, error.headers);
        if (error instanceof KeyManagerError) return this.#send(res, error.status, { error: { code: error.code, message: error.message } });
        gateway.logger.error({ err: error, admin: path }, 'admin request failed');
        this.#send(res, 500, { error: { code: 'internal', message: 'internal error' } });
      },
    );
    return true;
  }

  /**
   * Whether the request carries the admin token (constant-time comparison of SHA-256 digests), or comes
   * from the dashboard of a signed-in browser: its session cookie and the dashboard's header, which a
   * page of another site cannot send.
   */
  #authorized(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (timingSafeEqual(digest(match?.[1] ?? ''), this.#token) && match !== null) return true;
    return match === null && req.headers[DASHBOARD_HEADER] === '1' && this.#sessions?.valid(req) === true;
  }

  async #handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, gateway: GatewayRuntime): Promise<AdminAnswer> {
    if (!this.#authorized(req)) {
      req.resume();
      throw new AdminError(401, 'unauthorized', 'send the admin token: Authorization: Bearer <token>', { 'www-authenticate': 'Bearer realm="tollgate-admin"' });
    }
    const manager = this.#keyManager(gateway);
    const method = req.method ?? 'GET';
    const segments = path.split('/').filter((s) => s !== '').map(decodeSegment);
    const allow = (...methods: string[]): void => {
      if (!methods.includes(method)) throw new AdminError(405, 'method_not_allowed', `use ${methods.join(' or ')}`, { allow: methods.join(', ') });
    };
    const [first, id, action, ...rest] = segments;

    if (first === 'upstreams' && id === undefined) {
      allow('GET');
      const status: UpstreamStatus[] = gateway.container.resolve(Tokens.UpstreamSelector).status?.() ?? [];
      return { status: 200, body: { upstreams: status } };
    }
    if (first === 'config' && id === 'reload' && action === undefined) {
      allow('POST');
      return reloadConfig(gateway);
    }
    if (first === 'plans' && id === undefined) {
      allow('GET', 'POST');
      const plans = this.#planManager(gateway);
      if (method === 'GET') return { status: 200, body: { plans: plansByName(await plans.list()) } };
      const body = await readJson(req, res, this.#settings.maxBodyBytes);
      const name = optionalString(body, 'name');
      if (name === undefined) throw new AdminError(400, 'bad_request', 'name: is required');
      return { status: 201, body: { plan: await plans.create(name, planInput(body)) } };
    }
    if (first === 'plans' && id !== undefined && action === undefined) {
      allow('GET', 'PATCH', 'DELETE');
      const plans = this.#planManager(gateway);
      if (method === 'GET') return { status: 200, body: { plan: await plans.get(id) } };
      if (method === 'DELETE') return { status: 200, body: { plan: await plans.delete(id) } };
      const body = await readJson(req, res, this.#settings.maxBodyBytes);
      return { status: 200, body: { plan: await plans.update(id, planInput(body)) } };
    }
    if (first === 'usage' && id === 'export' && action === undefined) {
      allow('GET');
      const exported = await usageExport(
        {
          config: gateway.config,
          registry: this.#registry(gateway),
          usage: gateway.container.resolve(Tokens.UsageRecorder),
          now: () => gateway.clock.now(),
        },
        { from: query.get('from') ?? undefined, to: query.get('to') ?? undefined, format: query.get('format') ?? undefined },
      );
      return { status: 200, export: exported };
    }
    if (first === 'payments' && id === undefined) {
      allow('GET');
      const wallet = query.get('wallet') ?? undefined;
      const key = query.get('key') ?? undefined;
      if (wallet !== undefined && !WALLET_PATTERN.test(wallet)) throw new AdminError(400, 'bad_request', 'wallet: must be an address (0x and 40 hex digits)');
      if (wallet === undefined && key === undefined) throw new AdminError(400, 'bad_request', 'give wallet=0x… or key=<id>');
      const journal = this.#journal(gateway);
      const payments = journal === undefined ? [] : await listPayments(journal, { payer: wallet, keyId: key, limit: paymentLimit(query) });
      return { status: 200, body: { ...(wallet === undefined ? {} : { wallet }), ...(key === undefined ? {} : { key }), takesPayments: journal !== undefined, payments } };
    }
    if (first === 'keys' && id === undefined) {
      allow('GET', 'POST');
      if (method === 'GET') return { status: 200, body: { keys: await manager.list() } };
      const body = await readJson(req, res, this.#settings.maxBodyBytes);
      const plan = optionalString(body, 'plan');
      if (plan === undefined) throw new AdminError(400, 'bad_request', 'plan: is required');
      const issued = await manager.create({ plan, id: optionalString(body, 'id'), label: optionalString(body, 'label'), settings: optionalObject(body, 'settings') });
      return { status: 201, body: issued };
    }
    if (first === 'keys' && id !== undefined && action === 'settings' && rest.length === 2 && rest[1] === 'check') {
      allow('POST');
      await manager.get(id);
      const body = await readJson(req, res, this.#settings.maxBodyBytes);
      return { status: 200, body: { problems: manager.settingsProblems(rest[0]!, body) } };
    }
    if (first === 'keys' && id !== undefined && action === 'settings' && rest.length === 1) {
      allow('GET', 'PUT', 'DELETE');
      const section = rest[0]!;
      if (method === 'GET') return { status: 200, body: { id, section, value: (await manager.settingsSection(id, section)) ?? null } };
      if (method === 'DELETE') return { status: 200, body: { key: await manager.setSettingsSection(id, section, undefined) } };
      const body = await readJson(req, res, this.#settings.maxBodyBytes);
      return { status: 200, body: { key: await manager.setSettingsSection(id, section, body) } };
    }
    if (first === 'keys' && id !== undefined && rest.length === 0) {
      if (action === undefined) {
        allow('GET', 'PATCH', 'DELETE');
        if (method === 'GET') return { status: 200, body: { key: await manager.get(id), balance: await manager.balance(id), storage: await manager.storage(id) } };
        if (method === 'DELETE') return { status: 200, body: { key: await manager.revoke(id) } };
        const body = await readJson(req, res, this.#settings.maxBodyBytes);
        const changes = { plan: optionalString(body, 'plan'), label: optionalString(body, 'label'), settings: optionalObject(body, 'settings') };
        return { status: 200, body: { key: await manager.update(id, changes) } };
      }
      if (action === 'rotate') {
        allow('POST');
        return { status: 200, body: await manager.rotate(id) };
      }
      if (action === 'revoke') {
        allow('POST');
        return { status: 200, body: { key: await manager.revoke(id) } };
      }
      if (action === 'payments') {
        allow('GET');
        const journal = this.#journal(gateway);
        await manager.get(id);
        const payments = journal === undefined ? [] : await listPayments(journal, { keyId: id, limit: paymentLimit(query) });
        return { status: 200, body: { id, takesPayments: journal !== undefined, payments } };
      }
      if (action === 'credits') {
        allow('POST');
        const body = await readJson(req, res, this.#settings.maxBodyBytes);
        const topUpId = optionalString(body, 'id');
        if (topUpId === undefined) throw new AdminError(400, 'bad_request', 'id: is required (the top-up\'s reference: the same id is applied once)');
        const credits = body['credits'];
        if (typeof credits !== 'number') throw new AdminError(400, 'bad_request', 'credits: must be a positive integer');
        const topUp = await manager.topUp(id, credits, topUpId);
        return { status: topUp.applied ? 201 : 200, body: { id, ...topUp } };
      }
      if (action === 'pins') {
        allow('GET');
        return { status: 200, body: { id, storage: await manager.storage(id), pins: await manager.pins(id) } };
      }
      if (action === 'usage' || action === 'traffic') {
        allow('GET');
        const day = query.get('day') ?? undefined;
        const range = day !== undefined ? { from: day, to: day } : { from: query.get('from') ?? undefined, to: query.get('to') ?? undefined };
        if (action === 'traffic') return { status: 200, body: { id, ...(await manager.traffic(id, range)) } };
        // What the key keeps pinned now, beside its calls: storage is a state, not a count per day; and its balances now (today's and the paid one), as the key view shows them.
        return { status: 200, body: { id, days: await manager.usage(id, range), storage: await manager.storage(id), balance: await manager.balance(id) } };
      }
    }
    throw new AdminError(404, 'not_found', `no admin route ${method} ${this.#settings.prefix}${path}`);
  }

  /** The payments plugin's journal; undefined when the gateway takes no payments (the plugin is not loaded). */
  #journal(gateway: GatewayRuntime): PaymentLister | undefined {
    return gateway.container.isRegistered(PaymentJournalKey, true) ? gateway.container.resolve(PaymentJournalKey) : undefined;
  }

  #registry(gateway: GatewayRuntime): KeyRegistry | undefined {
    return gateway.container.isRegistered(KeyRegistryToken, true) ? gateway.container.resolve(KeyRegistryToken) : undefined;
  }

  #plans(gateway: GatewayRuntime): PlanRegistry | undefined {
    return gateway.container.isRegistered(PlanRegistryToken, true) ? gateway.container.resolve(PlanRegistryToken) : undefined;
  }

  /** Built per request: the config's plans are the current ones (after a reload too). */
  #planManager(gateway: GatewayRuntime): PlanManager {
    return new PlanManager({ config: gateway.config, plans: this.#plans(gateway), keys: this.#registry(gateway), now: () => gateway.clock.now() });
  }

  /**
   * Streams a usage export as the client reads it (backpressure: the store is read no faster than the
   * client takes the text). A failure once the answer started can only cut it short: it is logged and
   * the connection closed, so the client sees an incomplete answer, never a complete-looking one.
   */
  #stream(res: ServerResponse, exported: UsageExport, gateway: GatewayRuntime): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, {
      'content-type': exported.contentType,
      'content-disposition': `attachment; filename="${exported.fileName}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    pipeline(Readable.from(exported.chunks), res).catch((error: unknown) => {
      // A client that went away is no failure of the export.
      if ((error as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE') gateway.logger.error({ err: error }, 'usage export failed');
      res.destroy();
    });
  }

  #keyManager(gateway: GatewayRuntime): KeyManager {
    this.#manager ??= new KeyManager({
      config: gateway.config,
      registry: this.#registry(gateway),
      plans: this.#plans(gateway),
      ledger: gateway.container.resolve(Tokens.CreditLedger),
      usage: gateway.container.resolve(Tokens.UsageRecorder),
      now: () => gateway.clock.now(),
      ...(this.#traffic === undefined ? {} : { traffic: this.#traffic }),
      sections: gateway.container.isRegistered(KeySettingsSectionToken, true) ? gateway.container.resolveAll(KeySettingsSectionToken) : [],
      pins: gateway.container.resolve(Tokens.PinStore),
      ...(gateway.container.isRegistered(PlanStorageBytesToken, true) ? { storageBytes: gateway.container.resolve(PlanStorageBytesToken) } : {}),
    });
    return this.#manager;
  }

  #send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    res.end(text);
  }
}
