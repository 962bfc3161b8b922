/**
 * docs/payments.md's configurations load as written: each YAML block is a valid configuration (with a
 * network added where the block shows none, and its `${VAR}`s from an environment), and its
 * `plugins.payments` section passes the plugin's own settings check. Its demo numbers are the demo's.
 */
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { loadConfigFile } from '../core/index.js';
import { resolvePaymentsSettings } from '../plugins/payments/index.js';
import { DEMO_BUNDLE, DEMO_PAY_TO, DEMO_STABLECOIN, DEMO_X402_API_KEY, DEMO_X402_NETWORK } from '../examples/gateway/default-config.js';

const page = readFileSync(new URL('../docs/payments.md', import.meta.url), 'utf8');
const blocks = [...page.matchAll(/^```yaml\n([\s\S]*?)^```/gm)].map((m) => m[1]!);

t.test('every YAML block of docs/payments.md is a configuration the gateway and the plugin accept', async (t) => {
  t.ok(blocks.length >= 3, `the page shows configurations (${blocks.length})`);
  const env = { X402_SETTLEMENT_KEY: `0x${'11'.repeat(32)}`, X402_WALLET_SECRET: 'a-wallet-key-secret-of-forty-characters!' };
  const dir = t.testdir();
  for (const [n, block] of blocks.entries()) {
    const data = parse(block) as Record<string, unknown>;
    // A block that shows no network gets one (named base, as the embedded facilitator's).
    const file = join(dir, `block-${n + 1}.yaml`);
    writeFileSync(file, stringify({ networks: [{ name: 'base', families: ['evm'], upstreams: [{ url: 'https://base.example/rpc' }] }], ...data }));
    const config = await loadConfigFile(file, env);
    const settings = resolvePaymentsSettings([config.plugins.payments as object]);
    t.ok(Object.keys(settings.offers).every((plan) => config.plans[plan] !== undefined), `block ${n + 1}: its offers are plans' (${Object.keys(settings.offers).join(', ')})`);
  }
});

t.test("the page's demo figures are the demo's", async (t) => {
  for (const fact of [DEMO_X402_API_KEY, DEMO_STABLECOIN, DEMO_PAY_TO, DEMO_X402_NETWORK, `"amount":"${DEMO_BUNDLE.price}"`]) t.ok(page.includes(fact), fact);
  t.match(page, `${DEMO_BUNDLE.credits.toLocaleString('en-US')} credits for ${Number(DEMO_BUNDLE.price) / 1e6} tUSD`);
});
