import { request } from 'undici';

/** An admin API answer: its status, headers and text, and the body parsed when it is JSON (a CSV export is not). */
export interface AdminAnswer {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly text: string;
  readonly body: Record<string, unknown>;
}

/** Calls the admin API at `url` (`<origin>/admin/v1<route>`) with the admin token, sending `body` as JSON. */
export async function adminRequest(url: string, token: string, method: string, body?: unknown): Promise<AdminAnswer> {
  const res = await request(url, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch { /* CSV */ }
  return { status: res.statusCode, headers: res.headers, text, body: parsed };
}
