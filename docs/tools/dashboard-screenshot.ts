/**
 * Renders docs/images/dashboard.png (1280 px wide) and docs/images/dashboard-phone.png (390 px): a
 * gateway with an Anvil devnet, a few keys and some traffic, the dashboard signed in and opened on one
 * key, in Debian's Chromium, headless.
 *
 * `node --conditions=tollgate-source --import tsx docs/tools/dashboard-screenshot.ts`
 *
 * @module
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createGateway } from '../../core/index.js';
import { httpTransport } from '../../plugins/http/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { ledgerSqlite } from '../../plugins/ledger-sqlite/index.js';
import { admin } from '../../plugins/admin/index.js';
import { security } from '../../plugins/security/index.js';
import { devnet } from '@tollgate/devnet';

const TOKEN = 'screenshot-admin-token-0123456789';
const KEY = 'screenshot-demo-key-00001';
const gateway = await createGateway({
  config: {
    log: { level: 'silent' },
    server: { host: '127.0.0.1', port: 0 },
    keys: [
      { key: KEY, id: 'acme-dapp', plan: 'growth', settings: { security: { origins: ['https://*.acme.example'] } } },
      { key: 'screenshot-other-key-0002', id: 'partner-indexer', plan: 'team' },
    ],
    networks: [
      { name: 'eth-mainnet', families: ['evm'], upstreams: [{ embedded: 'anvil' }] },
      { name: 'polygon-mainnet', families: ['evm'], upstreams: [{ embedded: 'anvil#polygon' }] },
    ],
    plugins: { admin: { token: TOKEN } },
  },
  plugins: [ledgerSqlite({ path: ':memory:' }), admin(), httpTransport(), evmFamily(), security(), devnet()],
});
const server = await gateway.listen();
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

async function call(network: string, method: string, params: unknown[], headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(`${origin}/${network}/v3/${KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'https://app.acme.example', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  await res.arrayBuffer();
}

const account = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const plan: Array<[string, string, unknown[], number]> = [
  ['eth-mainnet', 'eth_blockNumber', [], 40],
  ['eth-mainnet', 'eth_getBalance', [account, 'latest'], 25],
  ['eth-mainnet', 'eth_call', [{ to: account, data: '0x' }, 'latest'], 18],
  ['eth-mainnet', 'eth_chainId', [], 30],
  ['polygon-mainnet', 'eth_blockNumber', [], 22],
  ['polygon-mainnet', 'eth_gasPrice', [], 12],
  ['eth-mainnet', 'eth_getBalance', ['0x12'], 3],
];
for (const [network, method, params, times] of plan) for (let i = 0; i < times; i++) await call(network, method, params);
for (let i = 0; i < 4; i++) await call('eth-mainnet', 'eth_chainId', [], { origin: 'https://evil.example' });

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  for (const [file, width, height] of [['dashboard.png', 1280, 1500], ['dashboard-phone.png', 390, 1600]] as const) {
    const page = await (await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 })).newPage();
    await page.goto(`${origin}/admin/`);
    await page.locator('#token').fill(TOKEN);
    await page.locator('#signin button[type=submit]').click();
    await page.locator('#methods tbody tr').first().waitFor();
    await page.screenshot({ path: fileURLToPath(new URL(`../images/${file}`, import.meta.url)), fullPage: false });
  }
} finally {
  await browser.close();
  await gateway.close();
}
