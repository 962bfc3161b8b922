import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import type { Browser } from 'playwright-core';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { security } from '../plugins/security/index.js';
import { devnet } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { launchChromium } from './helpers/chromium.js';

// What a browser dapp does with a key that has an origin list and requires a JWT: a page in Chromium
// calls the gateway cross-origin with `Authorization: Bearer`, through the CORS preflight; a page of
// another origin is refused with an answer its script can read.

/** A page server on its own port: a distinct origin for the browser. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>dapp</title>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const dapp = await pageServer();
const other = await pageServer();
t.teardown(() => { dapp.server.close(); other.server.close(); });

const signer = await generateKeyPair('ES256');
const KEY = 'browser-dapp-key-000001';
const gw = await startTestGateway(
  {
    keys: [{
      key: KEY,
      id: 'dapp',
      plan: 'growth',
      settings: { security: { origins: [dapp.origin], jwt: { audience: 'dapp', keys: [{ kid: 'k1', alg: 'ES256', publicKey: await exportSPKI(signer.publicKey) }] } } },
    }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] }],
  },
  [httpTransport(), evmFamily(), security(), devnet()],
);
t.teardown(() => gw.close());

const browser: Browser = await launchChromium();
t.teardown(() => browser.close());

const token = await new SignJWT({ methods: ['eth_chainId'] }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setAudience('dapp').setExpirationTime('5m').sign(signer.privateKey);

interface PageAnswer {
  status: number;
  body: { result?: string; error?: { code: number; message: string; data: { setting: string } } };
}

async function callFrom(origin: string, method: string, bearer: string | undefined): Promise<PageAnswer> {
  const context = await browser.newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  return page.evaluate(
    async ({ url, method, bearer }) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }) });
      return { status: res.status, body: await res.json() };
    },
    { url: gw.url('eth', KEY), method, bearer },
  ) as Promise<PageAnswer>;
}

t.test('the dapp\'s page, with its JWT: served across origins', async (t) => {
  const answer = await callFrom(dapp.origin, 'eth_chainId', token);
  t.equal(answer.status, 200, 'the preflight lets Authorization through, and the call is served');
  t.match(answer.body.result, /^0x[0-9a-f]+$/);
});

t.test('refusals a page\'s script can read', async (t) => {
  const narrowed = await callFrom(dapp.origin, 'eth_blockNumber', token);
  t.equal(narrowed.status, 403);
  t.equal(narrowed.body.error?.data.setting, 'jwt.methods', 'a method outside the token\'s claim');
  const missing = await callFrom(dapp.origin, 'eth_chainId', undefined);
  t.equal(missing.body.error?.data.setting, 'jwt', 'no token');
  const elsewhere = await callFrom(other.origin, 'eth_chainId', token);
  t.equal(elsewhere.status, 403);
  t.equal(elsewhere.body.error?.data.setting, 'origins', 'another origin, even with the token');
  t.match(elsewhere.body.error?.message, `origin not allowed: ${other.origin}; fix: `, 'the message names the origin and the fix');
});
