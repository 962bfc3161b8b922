import { request } from 'undici';

/** A raw HTTP answer: status, headers, and the body parsed as JSON when it is JSON. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: unknown;
}

/** POSTs `body` (a string is sent as is, anything else as JSON) and reads the whole answer. */
export async function post(url: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }, method: 'POST' | 'GET' | 'PUT' = 'POST'): Promise<RawAnswer> {
  const res = await request(url, { method, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** A JSON-RPC request object. */
export function rpc(method: string, params?: unknown[], id: number | string = 1): Record<string, unknown> {
  return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
}
