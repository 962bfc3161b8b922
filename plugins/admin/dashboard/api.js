// The admin API as the dashboard calls it: same origin, the session cookie (HttpOnly, set at sign-in)
// and the dashboard's header; never the admin token, which only the sign-in form sends.
const API = document.querySelector('meta[name="tollgate-admin-api"]').content;

/** An error answer of the admin API: its HTTP status and message. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Calls `path` under the API prefix; resolves with the JSON answer, rejects with an ApiError. */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = { 'x-tollgate-dashboard': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${API}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, data.error?.message ?? `HTTP ${res.status}`);
  return data;
}

/** Whether this browser holds a live dashboard session. */
export async function signedIn() {
  const res = await fetch('session', { credentials: 'same-origin', cache: 'no-store' });
  return res.ok && (await res.json()).signedIn === true;
}
