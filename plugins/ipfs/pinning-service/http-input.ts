import type { IncomingMessage } from 'node:http';
import { Errors, GatewayError } from '../../../core/plugin-api.js';
import { PsaMethod, type PinQuery, type PsaMethodName } from './methods.js';

/** What a Pinning Service API path names: the collection (`/pins`) or one pin request (`/pins/{requestid}`). */
export interface PinsTarget {
  readonly requestId?: string;
}

/** The target of `rest` (the path after the network's base), when it is one of the API's paths. */
export function pinsTarget(rest: string): PinsTarget | undefined {
  if (rest === '/pins' || rest === '/pins/') return {};
  const match = /^\/pins\/([^/]+)$/.exec(rest);
  if (match === null) return undefined;
  try {
    return { requestId: decodeURIComponent(match[1]!) };
  } catch {
    return { requestId: match[1]! };
  }
}

/** The operation an HTTP method asks of a target; undefined when the target does not take that method. */
export function operationOf(method: string | undefined, target: PinsTarget): PsaMethodName | undefined {
  if (target.requestId === undefined) return method === 'GET' ? PsaMethod.list : method === 'POST' ? PsaMethod.create : undefined;
  return method === 'GET' ? PsaMethod.get : method === 'POST' ? PsaMethod.replace : method === 'DELETE' ? PsaMethod.delete : undefined;
}

/** The `Allow` header of a target. */
export function allowedOf(target: PinsTarget): string {
  return target.requestId === undefined ? 'GET, POST, OPTIONS' : 'GET, POST, DELETE, OPTIONS';
}

/** The credentials of `Authorization: Bearer <API key>:<secret>`: undefined when there is no bearer token. */
export function bearerCredentials(header: string | undefined): { readonly apiKey: string; readonly secret?: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (match === null) return undefined;
  const token = match[1]!;
  const colon = token.indexOf(':');
  // A token without a secret names a key only: the pipeline refuses it as it refuses a wrong secret.
  if (colon === -1) return { apiKey: token };
  return { apiKey: token.slice(0, colon), secret: token.slice(colon + 1) };
}

function badRequest(message: string): GatewayError {
  return new GatewayError(Errors.INVALID_PARAMS, { message });
}

/** A comma-separated list (`style: form, explode: false`), repeated parameters joined. */
function listOf(search: URLSearchParams, name: string): string[] | undefined {
  const values = search.getAll(name);
  if (values.length === 0) return undefined;
  return values.flatMap((v) => v.split(',')).filter((v) => v !== '');
}

/**
 * `GET /pins`'s query as the `psa/list` method takes it. Values are passed as the client sent them
 * (the method's schema refuses a wrong one with the parameter's name); `meta` must be JSON.
 */
export function pinQueryOf(search: URLSearchParams): PinQuery {
  const query: Record<string, unknown> = {};
  const cid = listOf(search, 'cid');
  if (cid !== undefined) query.cid = cid;
  const status = listOf(search, 'status');
  if (status !== undefined) query.status = status;
  for (const name of ['name', 'match', 'before', 'after'] as const) {
    const value = search.get(name);
    if (value !== null) query[name] = value;
  }
  const limit = search.get('limit');
  if (limit !== null) query.limit = /^[0-9]{1,9}$/.test(limit) ? Number(limit) : limit;
  const meta = search.get('meta');
  if (meta !== null) {
    try {
      query.meta = JSON.parse(meta) as unknown;
    } catch {
      throw badRequest(`meta: not JSON: ${meta}`);
    }
  }
  return query as PinQuery;
}

/** Reads a JSON request body of at most `limitBytes`. */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw new GatewayError(Errors.BODY_TOO_LARGE, { message: `request body exceeds ${limitBytes} bytes` });
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw badRequest('the body is not JSON: send a Pin object ({"cid": "..."})');
  }
}
