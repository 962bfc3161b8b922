import t from 'tap';
import type { IncomingMessage } from 'node:http';
import { DashboardSessions, SESSION_COOKIE, SESSION_MS } from '../plugins/admin/index.js';

const TOKEN = 'dashboard-admin-token-0123456789';
const withCookie = (id: string): IncomingMessage => ({ headers: { cookie: `${SESSION_COOKIE}=${id}` } }) as IncomingMessage;

t.test('a session opened by one process is valid in another that has the same admin token (workers, instances, a restart)', async (t) => {
  let now = 1_700_000_000_000;
  const worker1 = new DashboardSessions(TOKEN, () => now);
  const worker2 = new DashboardSessions(TOKEN, () => now);
  const id = worker1.open();
  t.ok(worker1.valid(withCookie(id)), 'valid where it was opened');
  t.ok(worker2.valid(withCookie(id)), 'valid in another process');
  now += SESSION_MS;
  t.notOk(worker2.valid(withCookie(id)), 'expired after the session length');
});

t.test('a session of another admin token, a forged or altered id, and a signed-out id are refused', async (t) => {
  const now = 1_700_000_000_000;
  const sessions = new DashboardSessions(TOKEN, () => now);
  const other = new DashboardSessions('another-admin-token-0123456789', () => now);
  const id = sessions.open();
  t.notOk(other.valid(withCookie(id)), 'another admin token signs everyone out');
  const [expiry, nonce, mac] = id.split('.');
  t.notOk(sessions.valid(withCookie(`${(Number.parseInt(expiry!, 36) + SESSION_MS).toString(36)}.${nonce}.${mac}`)), 'a lengthened expiry breaks the signature');
  t.notOk(sessions.valid(withCookie(`${expiry}.${nonce}.${'A'.repeat(mac!.length)}`)), 'a made-up signature');
  t.notOk(sessions.valid(withCookie('not-a-session')), 'garbage');
  t.notOk(sessions.valid({ headers: {} } as IncomingMessage), 'no cookie');
  sessions.close(withCookie(id));
  t.notOk(sessions.valid(withCookie(id)), 'signed out in this process');
});
