import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Tokens } from '../core/plugin-api.js';
import type { UsageRecorder } from '../core/store-api.js';
import { startExampleGateway } from './helpers/example-gateway.js';

// examples/solana-transfer/transfer.mjs, run as the README says (plain `node`), against the demo gateway:
// it airdrops, simulates, sends and confirms a transfer by subscription, and the recipient holds it.
const script = fileURLToPath(new URL('../examples/solana-transfer/transfer.mjs', import.meta.url));
const gw = await startExampleGateway();
t.teardown(() => gw.close());

t.test('the README\'s kit transfer lands, confirmed through the gateway, and every call is in the key\'s usage', async (t) => {
  const child = spawn(process.execPath, [script], { env: { ...process.env, TOLLGATE_URL: gw.origin, TOLLGATE_KEY: gw.key, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 0, output);
  t.match(output, /^transfer \w{64,88} confirmed$/m);
  t.match(output, /^recipient \w{32,44} balance 250000000 lamports$/m, 'the recipient holds the amount sent');

  const usage = await gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder).usage!('demo', new Date().toISOString().slice(0, 10));
  for (const method of ['requestAirdrop', 'getLatestBlockhash', 'simulateTransaction', 'sendTransaction', 'getBalance', 'signatureSubscribe']) {
    t.ok((usage[method]?.calls ?? 0) >= 1 && (usage[method]?.credits ?? 0) > 0, `${method} is in the key's usage, charged`);
  }
  t.equal(usage['sendTransaction']?.calls, 1, 'the transfer was sent once');
});
