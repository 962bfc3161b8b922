import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { post, rpc } from './helpers/json-rpc.js';
import { alive, childPids } from './helpers/processes.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { DEVNET_PAYER_ADDRESS, DEVNET_PAYER_KEY } from '@tollgate/devnet';
import { DEMO_BUNDLE, DEMO_PAY_TO, DEMO_STABLECOIN, DEMO_X402_API_KEY } from '../examples/gateway/default-config.js';

// The bundled gateway as `npm start` runs it: a real process, its banner, its calls, its shutdown.
const main = new URL('../examples/gateway/main.ts', import.meta.url).pathname;

// The gateway's durable state (SQLite ledger, IPFS blocks) goes to a directory of the test's own.
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-example-data-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

function run(args: string[]): ChildProcess {
  return spawn(process.execPath, [...TSX_NODE_ARGS, main, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TOLLGATE_DATA_DIR: dataDir } });
}

function output(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c));
  child.stderr!.on('data', (c: Buffer) => (stderr += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

t.test('--help lists every flag', async (t) => {
  const result = await output(run(['--help']));
  t.equal(result.code, 0);
  for (const flag of ['--config', '--port', '--host', '--log-level', '--help']) t.match(result.stdout, flag);
});

t.test('config check prints a valid file resolved and refuses a bad one, naming the field', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-config-check-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const good = join(dir, 'good.yaml');
  await writeFile(good, 'keys:\n  - { key: check-key-000001, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: http://127.0.0.1:8545\n');
  const ok = await output(run(['config', 'check', good]));
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /valid\. Resolved, with secrets masked/);
  t.match(ok.stdout, /url: http:\/\/127\.0\.0\.1:8545/);
  t.notMatch(ok.stdout, 'check-key-000001', 'the API key is masked');
  const bad = join(dir, 'bad.yaml');
  await writeFile(bad, 'networks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: localhost:8545\n');
  const refused = await output(run(['config', 'check', bad]));
  t.equal(refused.code, 1);
  t.match(refused.stderr, /networks\[0\]\.upstreams\[0\]\.url: must match pattern "\^https\?:\/\/"/, 'names the field and what it must be');
  t.equal((await output(run(['config', 'check']))).code, 2, 'a missing file is bad usage');
});

t.test('a port in use is one line, before any embedded node starts', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const port = (holder.address() as AddressInfo).port;
  const busy = await output(run(['demo', '--port', String(port)]));
  t.equal(busy.code, 1);
  t.equal(busy.stderr, `tollgate: 127.0.0.1:${port} is already in use: stop what holds it, or choose another port with --port <n>\n`);
  t.equal(busy.stdout, '', 'no banner, nothing started');
  const adminBusy = await output(run(['demo', '--port', '0', '--admin-port', String(port)]));
  t.equal(adminBusy.code, 1);
  t.equal(adminBusy.stderr, `tollgate: 127.0.0.1:${port} is already in use: stop what holds it, or choose another port with --admin-port <n>\n`);
  t.equal(adminBusy.stdout, '', 'no banner, nothing started');
  const notAPort = await output(run(['demo', '--admin-port', 'nine']));
  t.equal(notAPort.code, 2);
  t.match(notAPort.stderr, /--admin-port: "nine" is not a port number/);
});

t.test('a bad flag or config is refused with a message naming the problem', async (t) => {
  const flag = await output(run(['--nope']));
  t.equal(flag.code, 2);
  t.match(flag.stderr, /nope/);
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-example-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'bad.yaml');
  await writeFile(file, 'networks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: localhost:8545\n');
  const bad = await output(run(['start', '--config', file]));
  t.equal(bad.code, 1);
  t.match(bad.stderr, /networks\[0\]\.upstreams\[0\]\.url: must match pattern/);
});

t.test('npm start serves all ten methods on the embedded chain and stops cleanly', async (t) => {
  const child = run(['demo', '--port', '0', '--log-level', 'warn']);
  const done = output(child);
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  const banner = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no banner: ${text}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      text += c;
      if (text.includes('Press Ctrl+C')) { clearTimeout(timer); resolve(text); }
    });
  });
  const eth = /(http:\/\/127\.0\.0\.1:\d+\/eth-devnet\/v3\/)<API_KEY>/.exec(banner)?.[1];
  const polygon = /(http:\/\/127\.0\.0\.1:\d+\/polygon-devnet\/v3\/)<API_KEY>/.exec(banner)?.[1];
  const key = /API key: (\S+)/.exec(banner)?.[1];
  t.ok(eth && polygon && key, 'the banner shows each network URL and a key');
  const E = `${eth}${key}`;
  const call = async (url: string, method: string, params: unknown[]): Promise<unknown> => {
    const res = await post(url, rpc(method, params));
    t.equal(res.status, 200, method);
    const body = res.json as { result?: unknown; error?: unknown };
    t.notOk(body.error, `${method} answered without error`);
    return body.result;
  };
  const block = await call(E, 'eth_getBlockByNumber', ['0x3', true]) as { hash: string; transactions: Array<{ hash: string }> };
  t.ok(block.transactions.length > 0, 'the seeded block has transactions');
  const tx = await call(E, 'eth_getTransactionByBlockNumberAndIndex', ['0x3', '0x0']) as { hash: string; to: string };
  t.equal(tx.hash, block.transactions[0]!.hash);
  t.equal((await call(E, 'eth_getTransactionByHash', [tx.hash]) as { hash: string }).hash, tx.hash);
  const receipt = await call(E, 'eth_getTransactionReceipt', [tx.hash]) as { logs: unknown[] };
  t.ok(receipt.logs.length > 0);
  t.ok((await call(E, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: tx.to }]) as unknown[]).length > 0);
  t.match(await call(E, 'eth_call', [{ to: tx.to, data: '0x1e81ccb2' }, 'latest']), /^0x0{63}[1-9a-f]/, 'pings() returns the seeded count');
  t.ok((await call(E, 'eth_createAccessList', [{ to: tx.to, data: '0x1e81ccb2' }, 'latest']) as { gasUsed: string }).gasUsed);
  t.equal(await call(E, 'eth_getUncleByBlockNumberAndIndex', ['latest', '0x0']), null);
  t.equal(await call(E, 'eth_getUncleByBlockHashAndIndex', [block.hash, '0x0']), null);
  t.ok((await call(`${polygon}${key}`, 'bor_getCurrentValidators', []) as unknown[]).length > 0);

  // The README's Solana examples.
  const solana = /(http:\/\/127\.0\.0\.1:\d+\/solana-devnet\/v3\/)<API_KEY>/.exec(banner)?.[1];
  t.ok(solana, 'the banner shows the Solana network');
  t.match(banner, /ws:\/\/127\.0\.0\.1:\d+\/solana-devnet\/ws\/v3\/<API_KEY>/, 'and its WebSocket URL, where its subscriptions are served');
  t.match(banner, /ws:\/\/127\.0\.0\.1:\d+\/eth-devnet\/ws\/v3\/<API_KEY>/, 'EVM networks show their WebSocket URL');
  const program = await call(`${solana}${key}`, 'getAccountInfo', ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', { encoding: 'base64' }]) as { value: { executable: boolean; data: [string, string] } };
  t.equal(program.value.executable, true);
  t.equal(program.value.data[1], 'base64');
  const nodes = await post(`${solana}${key}`, { jsonrpc: '2.0', id: 1, method: 'getClusterNodes' });
  t.ok(((nodes.json as { result: unknown[] }).result).length === 1, 'getClusterNodes without params');

  // x402: the banner's key with no credits and the devnet's payer; the key's 402 is an offer the
  // README's client pays, on eth-devnet's own stablecoin, settled by the gateway through eth-devnet.
  t.equal(/ x402 key: (\S+)/.exec(banner)?.[1], DEMO_X402_API_KEY, 'the banner shows the x402 key');
  t.equal(/ x402 payer: (0x[0-9a-f]{64})\s/.exec(banner)?.[1], DEVNET_PAYER_KEY, 'and the devnet payer\'s private key');
  const balanceOf = async (who: string): Promise<bigint> =>
    BigInt(await call(E, 'eth_call', [{ to: DEMO_STABLECOIN, data: `0x70a08231${who.slice(2).toLowerCase().padStart(64, '0')}` }, 'latest']) as string);
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), 1_000_000n * 10n ** 6n, 'the payer holds the seeded tUSD at the offered asset');
  const unpaid = await post(`${eth}${DEMO_X402_API_KEY}`, rpc('eth_blockNumber', []));
  t.equal(unpaid.status, 402, 'the x402 key has no credits');
  const offer = decodePaymentRequiredHeader(unpaid.headers['payment-required'] as string);
  t.match(offer.accepts, [{ scheme: 'exact', network: 'eip155:31337', asset: DEMO_STABLECOIN, payTo: DEMO_PAY_TO, amount: DEMO_BUNDLE.price, extra: { name: 'Tollgate Devnet USD', version: '2' } }]);
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const client = /```js\n(\/\/ x402-client\.mjs[\s\S]*?)```/.exec(readme)?.[1];
  t.ok(client, "README's x402-client.mjs");
  const file = join(t.testdir(), 'x402-client.mjs');
  writeFileSync(file, client!);
  const origin = /(http:\/\/127\.0\.0\.1:\d+)\/eth-devnet\/v3\//.exec(banner)![1]!;
  const before = await balanceOf(DEMO_PAY_TO);
  const paid = await output(spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TOLLGATE_URL: origin } }));
  t.equal(paid.code, 0, paid.stderr);
  t.match(paid.stdout, /^100 calls answered \(head \d+\); bundles bought: 1 \(0x[0-9a-f]{64}\)\n$/, "README's client pays its way, as README shows");
  t.equal(await balanceOf(DEMO_PAY_TO), before + BigInt(DEMO_BUNDLE.price), 'payTo received the one bundle');
  t.equal(await balanceOf(DEVNET_PAYER_ADDRESS), 1_000_000n * 10n ** 6n - BigInt(DEMO_BUNDLE.price), 'from the payer');

  const children = childPids(child.pid!);
  t.ok(children.length >= 2, 'the embedded chains run as child processes');
  child.kill('SIGTERM');
  const exit = await done;
  t.equal(exit.code, 0, 'SIGTERM stops the gateway cleanly');
  // Watchdog helpers notice their parent is gone within a second; poll rather than guess.
  const deadline = Date.now() + 10_000;
  while (children.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(children.filter(alive), [], 'and no upstream process is left behind');
});
