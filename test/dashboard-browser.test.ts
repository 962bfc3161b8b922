import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { create } from 'kubo-rpc-client';
import type { Browser, Page } from 'playwright-core';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { admin } from '../plugins/admin/index.js';
import { security } from '../plugins/security/index.js';
import { ipfs } from '../plugins/ipfs/index.js';
import { devnet } from '@tollgate/devnet';
import { MemoryPaymentJournal, payments, paymentIdOf } from '../plugins/payments/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { launchChromium } from './helpers/chromium.js';
import { basic } from './helpers/ipfs-gateway.js';

// The admin dashboard in Debian's Chromium, headless, driven by playwright-core, against a gateway
// with an Anvil devnet, an embedded IPFS node and a SQLite store: sign-in, the numbers (stored bytes
// included), key management, and the console.

const TOKEN = 'dashboard-admin-token-0123456789';
const CONFIG_KEY = 'dashboard-config-key-0001';
const FILES_KEY = 'dashboard-files-key-0001';
const FILES_SECRET = 'dashboard-files-secret-0001';
const STORAGE_BYTES = 1_000_000;
const heliaDir = mkdtempSync(join(tmpdir(), 'tollgate-dashboard-ipfs-'));
// The payments plugin's journal, filled below with what the desk records: the key page lists it.
const journal = new MemoryPaymentJournal();
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = `0x${'ab'.repeat(20)}`;
const WALLET = `0x${'Cd'.repeat(20)}`;
const gw = await startTestGateway(
  {
    keys: [
      { key: CONFIG_KEY, id: 'from-config', plan: 'growth' },
      { key: FILES_KEY, secret: FILES_SECRET, id: 'stores-files', plan: 'team' },
    ],
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] },
      { name: 'eth-b', families: ['evm'], upstreams: [{ embedded: 'anvil' }] },
      { name: 'files', families: ['ipfs'], upstreams: [{ embedded: 'helia' }] },
    ],
    plugins: {
      admin: { token: TOKEN },
      ipfs: { plans: { team: { readsPerSecond: 10, writesPerSecond: 10, storageBytes: STORAGE_BYTES } } },
      payments: { offers: { growth: [{ credits: 5_000, price: '1000000', asset: USDC, network: 'eip155:8453', payTo: PAY_TO, name: 'USD Coin', version: '2' }] }, facilitator: { url: { url: 'http://127.0.0.1:9' } } },
    },
  },
  [ledgerSqlite({ path: ':memory:' }), payments({ journal }), admin(), httpTransport(), evmFamily(), ipfs(), security(), devnet({ helia: { dataDir: heliaDir } })],
);
// The node's blocks go once the gateway (and the node in it) stopped.
t.teardown(async () => {
  await gw.close();
  rmSync(heliaDir, { recursive: true, force: true });
});

const browser: Browser = await launchChromium();
t.teardown(() => browser.close());

/** A number as the page writes it (`1,234,567`). */
const num = (text: string | null): number => Number((text ?? '').replaceAll(',', ''));

async function adminApi<T>(path: string): Promise<T> {
  const res = await request(`${gw.origin}/admin/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${await res.body.text()}`);
  return (await res.body.json()) as T;
}

/** A page that records every console error and uncaught exception. */
async function openPage(width: number, height: number): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  t.teardown(() => context.close());
  return { page, problems };
}

/** Signs in through the form; resolves once the page that follows is ready (the app, or the refusal). */
async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${gw.origin}/admin/`);
  await page.locator('#token').fill(token);
  await page.locator('#signin button[type=submit]').click();
  await page.locator('#app:visible, #signin-error:visible').waitFor();
}

// Traffic for the config key: calls on two networks, one refused by a security setting, one bad call.
await request(`${gw.origin}/admin/v1/keys`, { method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.body.dump());
for (const method of ['eth_blockNumber', 'eth_chainId', 'eth_chainId']) await post(gw.url('eth', CONFIG_KEY), rpc(method, []));
await post(gw.url('eth-b', CONFIG_KEY), rpc('eth_gasPrice', []));
await post(gw.url('eth', CONFIG_KEY), rpc('eth_getBalance', ['0x12']));
// Content stored through the file API by the second key: two pins.
const files = create({ url: `${gw.origin}/files/api/v0`, headers: { authorization: basic(FILES_KEY, FILES_SECRET) } });
await files.add(new TextEncoder().encode('hello world\n'));
await files.add(new TextEncoder().encode('stored from the dashboard test\n'));

t.test('sign-in: a wrong token is refused, the right one opens the dashboard', async (t) => {
  const { page, problems } = await openPage(1280, 900);
  await page.goto(`${gw.origin}/admin/`);
  t.ok(await page.locator('#signin').isVisible(), 'a sign-in form first');
  t.notOk(await page.locator('#app').isVisible(), 'and no data');
  await signIn(page, 'not-the-admin-token-000');
  t.ok(await page.locator('#signin-error').isVisible(), 'a wrong token is refused, with a message');
  t.notOk(await page.locator('#app').isVisible(), 'still no data');
  const cookies = await page.context().cookies();
  t.equal(cookies.length, 0, 'and no session cookie');
  await signIn(page, TOKEN);
  t.ok(await page.locator('#app').isVisible(), 'the right token opens the dashboard');
  const [cookie] = await page.context().cookies();
  t.match(cookie, { name: 'tollgate_admin', httpOnly: true, sameSite: 'Strict', path: '/admin' }, 'an HttpOnly, SameSite=Strict session cookie');
  t.not(cookie!.value, TOKEN, 'which is not the token');
  t.equal(await page.evaluate('document.cookie'), '', 'and which the page\'s scripts cannot read');
  t.same(problems, [], 'no console errors');
});

t.test('the numbers on the page are the admin API\'s', async (t) => {
  const topUp = await request(`${gw.origin}/admin/v1/keys/from-config/credits`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ credits: 1234, id: 'dashboard-test' }),
  });
  await topUp.body.dump();
  t.equal(topUp.statusCode, 201, 'the key has paid credits too');
  const { page, problems } = await openPage(1280, 900);
  await signIn(page, TOKEN);
  await page.locator('#keys tbody tr[data-id="from-config"]').click();
  await page.locator('#methods tbody tr').first().waitFor();
  const { balance } = await adminApi<{ balance: { used: number; dailyCredits: number; remaining: number; paidRemaining: number } }>('/keys/from-config');
  t.ok(balance.used > 0, 'the key has used credits');
  t.equal(num(await page.locator('#used-today').textContent()), balance.used, 'credits used today');
  t.equal(num(await page.locator('#daily-credits').textContent()), balance.dailyCredits, 'the daily balance');
  t.equal(num(await page.locator('#remaining-today').textContent()), balance.remaining, 'what is left');
  t.equal(balance.paidRemaining, 1234);
  t.equal(num(await page.locator('#paid-remaining').textContent()), balance.paidRemaining, 'the paid credits left');
  t.equal(num(await page.locator('#stored-bytes').textContent()), 0, 'a key that stored nothing: 0 bytes');
  t.equal(num(await page.locator('#stored-pins').textContent()), 0, 'in 0 pins');
  t.equal(await page.locator('#storage-limit').textContent(), 'no limit on its plan', 'its plan sets no storageBytes');

  const from = await page.locator('#from').inputValue();
  const to = await page.locator('#to').inputValue();
  const { days } = await adminApi<{ days: Array<{ methods: Record<string, { calls: number; credits: number; failed: number }> }> }>(`/keys/from-config/usage?from=${from}&to=${to}`);
  const expected = new Map<string, { calls: number; credits: number; failed: number }>();
  for (const day of days) {
    for (const [name, totals] of Object.entries(day.methods)) {
      const sum = expected.get(name) ?? { calls: 0, credits: 0, failed: 0 };
      expected.set(name, { calls: sum.calls + totals.calls, credits: sum.credits + totals.credits, failed: sum.failed + totals.failed });
    }
  }
  t.ok(expected.size >= 3, 'usage of several methods');
  const shown = await page.locator('#methods tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((c) => c.textContent)));
  t.same(new Map(shown.map(([name, calls, credits, failed]) => [name, { calls: num(calls), credits: num(credits), failed: num(failed) }])), expected, 'calls, credits and failures per method');

  const traffic = await adminApi<{ networks: Record<string, { calls: number; credits: number }>; outcomes: Record<string, number> }>(`/keys/from-config/traffic?from=${from}&to=${to}`);
  t.same(Object.keys(traffic.networks).sort(), ['eth', 'eth-b'], 'two networks called');
  const networks = await page.locator('#networks tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((c) => c.textContent)));
  t.same(Object.fromEntries(networks.map(([name, calls, credits]) => [name, { calls: num(calls), credits: num(credits) }])), Object.fromEntries(Object.entries(traffic.networks).map(([n, v]) => [n, { calls: v.calls, credits: v.credits }])), 'calls and credits per network');
  const outcomes = await page.locator('#outcomes tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((c) => c.textContent)));
  t.same(Object.fromEntries(outcomes.map(([o, n]) => [o, num(n)])), traffic.outcomes, 'calls by status');
  t.ok('200' in traffic.outcomes && '200 INVALID_PARAMS' in traffic.outcomes, 'answers and the bad call are told apart');

  const { upstreams } = await adminApi<{ upstreams: Array<{ name: string; network: string; healthy: boolean; details: { breaker: { state: string } } }> }>('/upstreams');
  const rows = await page.locator('#upstreams tbody tr').evaluateAll((trs) => trs.map((row) => [...row.children].map((c) => c.textContent)));
  t.same(rows.map((r) => [r[0], r[1], r[3], r[4]]), upstreams.map((u) => [u.network, u.name, u.healthy ? 'healthy' : 'unhealthy', u.details.breaker.state]), 'each upstream: health and breaker');
  t.equal(await page.locator('canvas#chart-methods').evaluate((c) => (c as unknown as { width: number }).width > 0), true, 'the charts are drawn');
  t.same(problems, [], 'no console errors');
});

t.test('the bytes a key stores through the file API are the admin API\'s', async (t) => {
  const { page, problems } = await openPage(1280, 900);
  await signIn(page, TOKEN);
  await page.locator('#methods tbody tr').first().waitFor();
  await page.locator('#keys tbody tr[data-id="stores-files"]').click();
  await page.locator('#detail-id:text-is("stores-files")').waitFor();
  const { storage } = await adminApi<{ storage: { bytes: number; pins: number; limitBytes?: number } }>('/keys/stores-files');
  t.same(storage, { bytes: storage.bytes, pins: 2, limitBytes: STORAGE_BYTES }, 'the key pinned what it added, on a plan with an allowance');
  t.ok(storage.bytes > 0, 'and stores bytes');
  t.equal(num(await page.locator('#stored-bytes').textContent()), storage.bytes, 'the bytes the key stores');
  t.equal(num(await page.locator('#stored-pins').textContent()), 2, 'in its pins');
  t.equal(await page.locator('#storage-limit').textContent(), `its plan allows ${STORAGE_BYTES.toLocaleString('en')} bytes`, 'beside its plan\'s allowance');
  t.same(problems, [], 'no console errors');
});

t.test('the key page lists the key\'s x402 payments, as the admin API does', async (t) => {
  const nonce = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;
  const base = { keyId: 'from-config', plan: 'growth', credits: 5_000, payer: WALLET, network: 'eip155:8453', asset: USDC, amount: '1000000', payTo: PAY_TO };
  await journal.record({ ...base, id: paymentIdOf('eip155:8453', USDC, WALLET, nonce(1)), transaction: `0x${'11'.repeat(32)}`, settledAt: Date.UTC(2026, 10, 1) });
  await journal.markCredited(paymentIdOf('eip155:8453', USDC, WALLET, nonce(1)), Date.UTC(2026, 10, 1, 0, 1));
  await journal.record({ ...base, id: paymentIdOf('eip155:8453', USDC, WALLET, nonce(2)), transaction: `0x${'22'.repeat(32)}`, settledAt: Date.UTC(2026, 10, 2) });
  const { page, problems } = await openPage(1280, 900);
  await signIn(page, TOKEN);
  await page.locator('#keys tbody tr[data-id="from-config"]').click();
  await page.locator('#payments tbody tr').first().waitFor();
  const { payments: listed } = await adminApi<{ payments: Array<{ id: string; startedAt: string; state: string; credits: number; payer: string; transaction: string }> }>('/keys/from-config/payments');
  t.equal(listed.length, 2);
  const rows = await page.locator('#payments tbody tr').evaluateAll((trs) => trs.map((row) => ({ id: (row as unknown as { dataset: Record<string, string> }).dataset.payment, cells: [...row.children].map((c) => c.textContent) })));
  t.same(rows.map((r) => r.id), listed.map((p) => p.id), 'the same payments, newest first');
  t.same(rows.map((r) => [r.cells[0], r.cells[1], num(r.cells[2]!), r.cells[4], r.cells[5]]), listed.map((p) => [p.startedAt, p.state, p.credits, p.payer, p.transaction]), 'when, state, credits, wallet, transaction');
  t.same(rows.map((r) => r.cells[1]), ['settled', 'credited']);
  t.notOk(await page.locator('#payments-none').isVisible());

  await page.locator('#keys tbody tr[data-id="stores-files"]').click();
  await page.locator('#detail-id:text-is("stores-files")').waitFor();
  await page.locator('#payments-none:visible').waitFor();
  t.equal(await page.locator('#payments tbody tr').count(), 0, 'a key that bought nothing: none');
  t.same(problems, [], 'no console errors');
});

t.test('a key created on the page answers JSON-RPC; revoked on the page, it gets 401', async (t) => {
  const { page, problems } = await openPage(1280, 900);
  await signIn(page, TOKEN);
  await page.locator('#create-plan').selectOption('growth');
  await page.locator('#create-id').fill('made-on-page');
  await page.locator('#create-label').fill('Browser test');
  await page.locator('#create button[type=submit]').click();
  await page.locator('#issued').waitFor({ state: 'visible' });
  let apiKey = (await page.locator('#issued-key').textContent())!;
  t.match(apiKey, /^\S{20,}$/, 'the API key is shown once');
  const listed = await adminApi<{ key: { id: string; label: string; plan: string } }>('/keys/made-on-page');
  t.match(listed.key, { id: 'made-on-page', label: 'Browser test', plan: 'growth' }, 'the admin API has it');

  const answer = await post(gw.url('eth', apiKey), rpc('eth_chainId', []));
  t.equal(answer.status, 200, 'the new key answers JSON-RPC');
  t.match(answer.json, { result: /^0x[0-9a-f]+$/ });

  await page.locator('#security').fill(JSON.stringify({ methods: ['eth_chainId'] }));
  await page.locator('#security-form button[type=submit]').click();
  await page.locator('#notice:has-text("Security settings saved.")').waitFor();
  const refused = await post(gw.url('eth', apiKey), rpc('eth_blockNumber', []));
  t.equal(refused.status, 403, 'security settings set on the page apply');

  await page.locator('#security').fill('{"origins": ["not an origin/"]}');
  await page.locator('#security-form button[type=submit]').click();
  await page.locator('#notice.error').waitFor();
  t.match(await page.locator('#notice').textContent(), /settings\.security\.origins\[0\]: must be an origin/, 'a bad setting is refused with the API\'s message');

  await page.locator('#plan').selectOption('team');
  await page.locator('#plan-form button[type=submit]').click();
  await page.locator('#notice:has-text("Plan changed.")').waitFor();
  t.equal((await adminApi<{ key: { plan: string } }>('/keys/made-on-page')).key.plan, 'team', 'the plan changed');

  await page.locator('#rotate').click();
  await page.locator('#notice:has-text("Key rotated")').waitFor();
  const rotated = (await page.locator('#issued-key').textContent())!;
  t.not(rotated, apiKey, 'rotating shows a new API key');
  t.equal((await post(gw.url('eth', apiKey), rpc('eth_chainId', []))).status, 401, 'the old API key stops working');
  t.equal((await post(gw.url('eth', rotated), rpc('eth_chainId', []))).status, 200, 'the new one answers (a listed method)');
  apiKey = rotated;

  await page.locator('#revoke').click();
  await page.locator('#revoke-confirm').click();
  await page.locator('#notice:has-text("Key revoked.")').waitFor();
  const revoked = await post(gw.url('eth', apiKey), rpc('eth_chainId', []));
  t.equal(revoked.status, 401, 'the revoked key gets 401');
  t.equal(await page.locator('#keys tbody tr[data-id="made-on-page"] td:last-child').textContent(), 'revoked', 'the page says so');
  t.same(problems, [], 'no console errors');
});

t.test('usable on a phone: nothing wider than the screen', async (t) => {
  const { page, problems } = await openPage(390, 844);
  await signIn(page, TOKEN);
  await page.locator('#methods tbody tr').first().waitFor();
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  t.ok(overflow <= 0, `no horizontal scrolling of the page (${overflow}px)`);
  const box = await page.locator('#chart-methods').boundingBox();
  t.ok(box !== null && box.width <= 390 && box.width > 200, 'charts fit the screen');
  t.same(problems, [], 'no console errors');
});

t.test('the dashboard\'s files and the API are behind the sign-in', async (t) => {
  const page = await request(`${gw.origin}/admin/`);
  t.equal(page.statusCode, 200);
  t.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'/, 'a strict content security policy');
  await page.body.dump();
  const noSession = await request(`${gw.origin}/admin/v1/keys`, { headers: { 'x-tollgate-dashboard': '1' } });
  t.equal(noSession.statusCode, 401, 'the API refuses a browser without a session');
  await noSession.body.dump();
  const signedIn = await request(`${gw.origin}/admin/session`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKEN}` });
  const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
  await signedIn.body.dump();
  const withoutHeader = await request(`${gw.origin}/admin/v1/keys`, { headers: { cookie } });
  t.equal(withoutHeader.statusCode, 401, 'the cookie alone (a cross-site form, say) is not enough');
  await withoutHeader.body.dump();
  const withHeader = await request(`${gw.origin}/admin/v1/keys`, { headers: { cookie, 'x-tollgate-dashboard': '1' } });
  t.equal(withHeader.statusCode, 200, 'the cookie and the dashboard\'s header are');
  await withHeader.body.dump();
  const out = await request(`${gw.origin}/admin/session/end`, { method: 'POST', headers: { cookie } });
  await out.body.dump();
  const after = await request(`${gw.origin}/admin/v1/keys`, { headers: { cookie, 'x-tollgate-dashboard': '1' } });
  t.equal(after.statusCode, 401, 'signed out, the session is gone');
  await after.body.dump();
});
