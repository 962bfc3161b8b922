import 'reflect-metadata'; // tsyringe is imported below, before the core (which loads it too)
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { container as rootContainer } from 'tsyringe';
import { request } from 'undici';
import { ConfigError, resolveConfig, type NetworkConfig } from '../core/index.js';
import { Tokens } from '../core/plugin-api.js';
import type { EmbeddedUpstreamProvider } from '../core/upstream-api.js';
import {
  AnvilStartError,
  SEED_CONTRACT,
  SEED_REVERT_REASON,
  anvilPlatformPackage,
  borValidators,
  devnet,
  encodeErrorString,
  quantity,
  resolveAnvilBinary,
  seedDevnet,
  startAnvil,
  startBorServer,
  readHeliaSettings,
  readLiteSvmSettings,
  type DevnetInstance,
  type DevnetOptions,
} from '@tollgate/devnet';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

// --- helpers -------------------------------------------------------------------------------------

interface Reply {
  status: number;
  text: string;
  json: unknown;
}

/** POSTs a raw body and returns status, exact text and parsed JSON (if any). */
async function post(url: string, body: unknown): Promise<Reply> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  let json: unknown;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.statusCode, text, json };
}

/** One JSON-RPC call; returns the whole response object. */
async function call(url: string, method: string, params: unknown[] = [], id: number | string = 1): Promise<{ result?: unknown; error?: { code: number; message: string; data?: unknown } }> {
  return (await post(url, { jsonrpc: '2.0', id, method, params })).json as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
}

/** One JSON-RPC call's result; fails the test on an error. */
async function result<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const reply = await call(url, method, params);
  if (reply.error !== undefined) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
  return reply.result as T;
}

/** Whether a pid is a live process (a zombie awaiting its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

const network = (options: Record<string, unknown> = {}, name = 'devnet-test'): NetworkConfig => ({ name, families: ['evm'], upstreams: [], options });

function provider(providers: readonly EmbeddedUpstreamProvider[], kind: string): EmbeddedUpstreamProvider {
  const found = providers.find((p) => p.kind === kind);
  if (found === undefined) throw new Error(`no provider ${kind}`);
  return found;
}

const padAddress = (address: string): string => `0x${address.slice(2).padStart(64, '0')}`;

// --- Anvil process ---------------------------------------------------------------------------------

t.test('the Anvil binary is found through the platform package', async (t) => {
  t.equal(anvilPlatformPackage('linux', 'x64'), '@foundry-rs/anvil-linux-amd64');
  t.equal(anvilPlatformPackage('darwin', 'arm64'), '@foundry-rs/anvil-darwin-arm64');
  t.match(resolveAnvilBinary(), /anvil(\.exe)?$/);
});

t.test('startAnvil answers on a free port and stop() leaves no process behind', async (t) => {
  const anvil = await startAnvil({ chainId: 4242, accounts: 3, gasLimit: 40_000_000 });
  t.teardown(() => anvil.stop());
  t.match(anvil.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.equal(anvil.chainId, 4242);
  t.equal(await result(anvil.url, 'eth_chainId'), quantity(4242));
  t.equal((await result<string[]>(anvil.url, 'eth_accounts')).length, 3);
  t.equal((await result<{ gasLimit: string }>(anvil.url, 'eth_getBlockByNumber', ['latest', false])).gasLimit, quantity(40_000_000));
  t.equal(await result(anvil.url, 'anvil_getAutomine'), true, 'automine by default');
  t.ok(alive(anvil.pid));

  const watchdog = anvil.watchdogPid;
  t.ok(watchdog !== undefined && alive(watchdog), 'a watchdog guards it');
  await anvil.stop();
  t.throws(() => process.kill(anvil.pid, 0), 'the Anvil pid is gone after stop()');
  t.throws(() => process.kill(watchdog ?? -1, 0), 'and so is the watchdog');
  await anvil.stop(); // idempotent
  await t.rejects(request(anvil.url, { method: 'POST', body: '{}' }), 'nothing listens on its port any more');
});

t.test('two Anvils get two ports', async (t) => {
  const [a, b] = await Promise.all([startAnvil(), startAnvil()]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  t.not(a.port, b.port);
});

t.test('a failing start reports Anvil stderr and leaves nothing behind', async (t) => {
  const error = await startAnvil({ args: ['--no-such-flag'] }).then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof AnvilStartError);
  t.match((error as AnvilStartError).message, /exited before answering/);
  t.match((error as AnvilStartError).stderr, /no-such-flag/);
  t.match((error as AnvilStartError).message, /--- anvil stderr ---/);

  const missing = await startAnvil({ binary: '/nonexistent/anvil' }).then(() => undefined, (e: unknown) => e);
  t.ok(missing instanceof AnvilStartError);
  t.match((missing as Error).message, /could not run Anvil.*ENOENT/);
});

t.test('a taken fixed port is reported as address in use', async (t) => {
  const blocker = createServer((socket) => socket.resume()); // read, so a peer's close is seen
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  const { port } = blocker.address() as { port: number };
  const error = await startAnvil({ port }).then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof AnvilStartError);
  t.equal((error as AnvilStartError).addressInUse, true, (error as Error).message);
});

/**
 * Runs a Node child that starts an Anvil and prints its pids, then either exits through `process.exit`
 * after killing the watchdog (so only the exit hook can save the day) or is SIGKILLed (no hook runs: only
 * the watchdog can). Returns whether the Anvil died with it.
 */
async function orphanCheck(how: 'exit' | 'sigkill'): Promise<{ pid: number; gone: boolean }> {
  const entry = fileURLToPath(new URL('../packages/devnet/src/index.ts', import.meta.url));
  const code = [
    `const { startAnvil } = await import(${JSON.stringify(entry)});`,
    'const anvil = await startAnvil();',
    'console.log(JSON.stringify({ pid: anvil.pid, watchdog: anvil.watchdogPid }));',
    how === 'exit' ? 'process.kill(anvil.watchdogPid, "SIGKILL"); setTimeout(() => process.exit(0), 200);' : 'setInterval(() => {}, 1000);',
  ].join('\n');
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let pids: { pid: number; watchdog: number } | undefined;
  try {
    let out = '';
    pids = await new Promise<{ pid: number; watchdog: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no pids within 60 s: ${out}`)), 60_000);
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line !== undefined) { clearTimeout(timer); resolve(JSON.parse(line) as { pid: number; watchdog: number }); }
      });
      child.once('exit', (c) => { clearTimeout(timer); reject(new Error(`child exited (${c}) before printing: ${out}`)); });
    });
    if (how === 'sigkill') child.kill('SIGKILL');
    await exited;
    const { pid } = pids;
    const gone = await eventually(() => !alive(pid));
    return { pid, gone };
  } finally {
    if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited; }
    for (const pid of [pids?.pid, pids?.watchdog]) if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
  }
}

t.test('Anvil dies with its parent on process.exit() (the exit hook)', async (t) => {
  const { pid, gone } = await orphanCheck('exit');
  t.ok(gone, `Anvil ${pid} died with its parent`);
});
t.test('Anvil dies with its parent even on SIGKILL (the watchdog)', async (t) => {
  const { pid, gone } = await orphanCheck('sigkill');
  t.ok(gone, `Anvil ${pid} died with its parent`);
});

// --- the anvil provider and the seed --------------------------------------------------------------

const plugin = devnet();
t.teardown(() => plugin.stop());
const eth = (await provider(plugin.providers, 'anvil').start('default', network({ chainId: 1 }))) as DevnetInstance;
const url = eth.url;
const seed = eth.getSeed();

t.test('the anvil provider starts a seeded Anvil with the network options', async (t) => {
  t.equal(eth.kind, 'anvil');
  t.equal(eth.id, 'anvil#default');
  t.equal(eth.url, eth.anvil.url);
  t.equal(eth.chainId, 1);
  t.equal(await result(url, 'eth_chainId'), '0x1');
  t.equal(plugin.instance('anvil'), plugin.instance('anvil#default'));
  t.equal(plugin.getSeed(), seed);
  t.equal(seed.chainId, 1);
  t.equal(seed.accounts.length, 10);
  t.equal(seed.blockGasLimit, 30_000_000);
  t.equal(await result(url, 'eth_getCode', [seed.contract.address, 'latest']), SEED_CONTRACT.deployedBytecode);
  t.equal(await result(url, 'anvil_getAutomine'), true, 'automine restored after seeding');
  t.equal(Number(await result<string>(url, 'eth_blockNumber')), seed.latestBlock);
});

t.test('seeded blocks: deployment, three transaction types in one block, pings', async (t) => {
  const { deploy, eip1559Transfer, legacyTransfer, accessList, ping, pingOther } = seed.transactions;
  t.same([deploy.blockNumber, deploy.index, deploy.type], [1, 0, '0x2']);
  t.same([eip1559Transfer.blockNumber, eip1559Transfer.index, eip1559Transfer.type], [2, 0, '0x2']);
  t.same([legacyTransfer.blockNumber, legacyTransfer.index, legacyTransfer.type], [2, 1, '0x0']);
  t.same([accessList.blockNumber, accessList.index, accessList.type], [2, 2, '0x1']);
  t.same([ping.blockNumber, ping.index, ping.logs], [3, 0, 3]);
  t.same([pingOther.blockNumber, pingOther.index, pingOther.logs], [3, 1, 2]);

  for (const [role, tx] of Object.entries(seed.transactions)) {
    const got = await result<{ hash: string; type: string; blockNumber: string; transactionIndex: string; from: string }>(url, 'eth_getTransactionByHash', [tx.hash]);
    t.same([got.hash, got.type, Number(got.blockNumber), Number(got.transactionIndex), got.from], [tx.hash, tx.type, tx.blockNumber, tx.index, tx.from], `${role} by hash`);
    const receipt = await result<{ status: string; blockHash: string }>(url, 'eth_getTransactionReceipt', [tx.hash]);
    t.same([receipt.status, receipt.blockHash], ['0x1', tx.blockHash], `${role} receipt`);
  }
  const legacy = await result<{ gasPrice: string; maxFeePerGas?: string; value: string }>(url, 'eth_getTransactionByHash', [legacyTransfer.hash]);
  t.equal(legacy.maxFeePerGas, undefined, 'the legacy transfer has no 1559 fee fields');
  t.equal(BigInt(legacy.value), 10n ** 18n / 2n);
  const byIndex = await result<{ hash: string }>(url, 'eth_getTransactionByBlockNumberAndIndex', [quantity(2), '0x1']);
  t.equal(byIndex.hash, legacyTransfer.hash);
  const block = await result<{ hash: string; transactions: { hash: string }[] }>(url, 'eth_getBlockByNumber', [quantity(2), true]);
  t.equal(block.hash, eip1559Transfer.blockHash);
  t.same(block.transactions.map((tx) => tx.hash), [eip1559Transfer.hash, legacyTransfer.hash, accessList.hash]);
});

t.test('seeded logs are found by eth_getLogs, with indexed topics', async (t) => {
  t.same([seed.logs.count, seed.logs.fromBlock, seed.logs.toBlock], [5, 3, 3]);
  t.equal(seed.totalLogs, 5);
  t.equal(seed.bulkLogs, undefined);
  type Log = { address: string; topics: string[]; data: string; blockNumber: string; transactionHash: string };
  const all = await result<Log[]>(url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]);
  t.equal(all.length, 5, 'a full-range query is small by default');
  const logs = await result<Log[]>(url, 'eth_getLogs', [{ fromBlock: quantity(3), toBlock: quantity(3), address: seed.contract.address }]);
  t.equal(logs.length, 5);
  t.ok(logs.every((log) => log.topics[0] === SEED_CONTRACT.pingTopic && log.address === seed.contract.address));
  t.same(logs.map((log) => BigInt(log.topics[2] ?? '0x')), [0n, 1n, 2n, 3n, 4n], 'n counts every ping');
  t.equal(logs[0]?.data, seed.tags.ping);
  t.equal(logs[4]?.data, seed.tags.pingOther);
  const fromOther = await result<Log[]>(url, 'eth_getLogs', [{ fromBlock: '0x0', topics: [SEED_CONTRACT.pingTopic, padAddress(seed.transactions.pingOther.from)] }]);
  t.same(fromOther.map((log) => log.transactionHash), [seed.transactions.pingOther.hash, seed.transactions.pingOther.hash]);
  const byHash = await result<Log[]>(url, 'eth_getLogs', [{ blockHash: seed.transactions.ping.blockHash }]);
  t.equal(byHash.length, 5);
});

t.test('reverts come back as code 3 with the decoded reason and the payload', async (t) => {
  t.equal(seed.revert.reason, SEED_REVERT_REASON);
  t.equal(seed.revert.data, encodeErrorString(SEED_REVERT_REASON));
  const reply = await call(url, 'eth_call', [{ to: seed.contract.address, data: seed.revert.call }, 'latest']);
  t.same(reply.error, { code: 3, message: `execution reverted: ${SEED_REVERT_REASON}`, data: seed.revert.data });
  t.match(String(reply.error?.data), /^0x08c379a0/);
  t.equal(seed.revert.message, reply.error?.message);

  const panic = await call(url, 'eth_call', [{ to: seed.contract.address, data: seed.panic.call }, 'latest']);
  t.equal(panic.error?.code, 3);
  t.equal(panic.error?.data, seed.panic.data);
  t.match(String(panic.error?.data), /^0x4e487b71/);

  const custom = await call(url, 'eth_call', [{ to: seed.contract.address, data: seed.customError.call }, 'latest']);
  t.equal(custom.error?.code, 3);
  t.equal(custom.error?.data, seed.customError.data);

  t.equal(BigInt(await result<string>(url, 'eth_call', [{ to: seed.contract.address, data: seed.calls.succeed }, 'latest'])), 1n);
  t.equal(Number(await result<string>(url, 'eth_call', [{ to: seed.contract.address, data: seed.calls.pings }, 'latest'])), 5);
  const estimate = await call(url, 'eth_estimateGas', [{ to: seed.contract.address, data: seed.revert.call }]);
  t.same(estimate.error, { code: 3, message: `execution reverted: ${SEED_REVERT_REASON}`, data: seed.revert.data }, 'eth_estimateGas reverts alike');
});

t.test('gasLeft() reflects a gas far above the block gas limit (Anvil applies no cap)', async (t) => {
  const limit = BigInt(seed.blockGasLimit);
  for (const multiple of [1n, 10n, 20n]) {
    const gas = limit * multiple;
    const left = BigInt(await result<string>(url, 'eth_call', [{ to: seed.contract.address, data: seed.calls.gasLeft, gas: quantity(gas) }, 'latest']));
    t.ok(left < gas && left > gas - 30_000n, `gas ${multiple}x the block limit: gasleft() ${left} just under ${gas}`);
  }
  const estimate = await call(url, 'eth_estimateGas', [{ to: seed.contract.address, data: seed.calls.gasLeft, gas: quantity(limit * 20n) }]);
  t.match(estimate.result, /^0x[0-9a-f]+$/, 'eth_estimateGas accepts 20x too');
  const noGas = BigInt(await result<string>(url, 'eth_call', [{ to: seed.contract.address, data: seed.calls.gasLeft }, 'latest']));
  t.ok(noGas < limit && noGas > limit - 30_000n, 'without gas, a call gets the block gas limit');
  const access = await result<{ accessList: { address: string; storageKeys: string[] }[] }>(url, 'eth_createAccessList', [{ to: seed.contract.address, data: seed.calls.pings }, 'latest']);
  t.same(access.accessList, [{ address: seed.contract.address, storageKeys: [`0x${'0'.repeat(64)}`] }]);
});

t.test('bulk logs push a full-range eth_getLogs past 10,000 results within the block gas limit', async (t) => {
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const bulkSeed = await seedDevnet(anvil.url, { bulkLogs: 10_001 });
  const bulk = bulkSeed.bulkLogs;
  t.ok(bulk);
  t.equal(bulk?.count, 10_001);
  t.equal(bulk?.transactions.length, 3, 'in 5,000-log transactions');
  t.ok(bulk?.transactions.every((tx) => tx.gasUsed < bulkSeed.blockGasLimit), 'each fits a block');
  t.equal(bulkSeed.totalLogs, 10_006);
  const logs = await result<unknown[]>(anvil.url, 'eth_getLogs', [{ fromBlock: quantity(bulk?.fromBlock ?? 0), toBlock: quantity(bulk?.toBlock ?? 0) }]);
  t.equal(logs.length, 10_001);
});

t.test('an integer blockTime switches to interval mining after seeding', async (t) => {
  const dev = devnet({ blockTime: 1 });
  t.teardown(() => dev.stop());
  const instance = await provider(dev.providers, 'anvil').start('timed', network()) as DevnetInstance;
  t.same([instance.getSeed().transactions.legacyTransfer.blockNumber, instance.getSeed().transactions.legacyTransfer.index], [2, 1], 'same layout');
  t.equal(await result(instance.url, 'anvil_getAutomine'), false);
  const before = Number(await result<string>(instance.url, 'eth_blockNumber'));
  t.ok(await eventually(async () => Number(await result<string>(instance.url, 'eth_blockNumber')) > before, 4_000), 'blocks keep coming');
});

t.test('seed: false starts a bare Anvil', async (t) => {
  const dev = devnet({ seed: false });
  t.teardown(() => dev.stop());
  const instance = await provider(dev.providers, 'anvil').start('bare', network()) as DevnetInstance;
  t.equal(instance.seed, undefined);
  t.throws(() => instance.getSeed(), /seed: false/);
  t.equal(await result(instance.url, 'eth_blockNumber'), '0x0');
});

t.test('bad network options are refused with where they are', async (t) => {
  await t.rejects(provider(plugin.providers, 'anvil').start('bad', network({ chainId: 'one' }, 'badnet')), ConfigError);
  await t.rejects(provider(plugin.providers, 'anvil').start('bad', network({ chainId: 'one' }, 'badnet')), new ConfigError(['networks["badnet"].options.chainId: must be a positive integer']));
  await t.rejects(
    provider(plugin.providers, 'bor').start('bad', network({ signers: ['0x12', { signer: '0x12', power: 1.5 }] })),
    new ConfigError(['networks["devnet-test"].options.signers[0]: must be a 20-byte hex address (0x and 40 hex digits)', 'networks["devnet-test"].options.signers[1].signer: must be a 20-byte hex address (0x and 40 hex digits)', 'networks["devnet-test"].options.signers[1].power: must be an integer']),
  );
  t.equal(plugin.instance('bor#bad'), undefined);
  t.same(await provider(plugin.providers, 'anvil').start('bad', network({ chainId: 5, gasLimit: 0 })).then(() => [], (error: ConfigError) => error.problems), ['networks["devnet-test"].options.gasLimit: must be a positive integer (a number, or a decimal or 0x string)']);
  t.equal(plugin.instance('anvil#bad'), undefined, 'nothing was started');
});

t.test("the devnet's settings go through Tollgate's settings validator, every layer", async (t) => {
  // Code: Anvil's settings at the top, litesvm and helia in their members; bigints as code may give them.
  t.throws(() => devnet({ chainId: 0, litesvm: { slotMs: -1 }, helia: { objectGet: 'no' }, colour: 'red' } as unknown as DevnetOptions), new ConfigError([
    'devnet().colour: is not a known field',
    'devnet().chainId: must be a positive integer',
    'devnet().litesvm.slotMs: must be a non-negative integer',
    'devnet().helia.objectGet: must be true or false',
  ]));
  t.doesNotThrow(() => devnet({ gasLimit: 30_000_000n, baseFee: 7n, litesvm: { startSlot: 10n } }), 'bigints are quantities');
  t.throws(() => devnet({ gasLimit: -1n }), new ConfigError(['devnet().gasLimit: must be a positive integer (a number, or a decimal or 0x string)']));
  // The config's section: every provider's keys, and nothing else.
  const config = (section: Record<string, unknown>): ReturnType<typeof resolveConfig> => resolveConfig({ networks: [{ name: 'x', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:1' }] }], plugins: { devnet: section } });
  t.throws(() => devnet().register(rootContainer.createChildContainer(), config({ slotMs: 'fast', helia: { dataDir: '' }, blocktime: 2 })), new ConfigError([
    'plugins.devnet.blocktime: is not a known field',
    'plugins.devnet.slotMs: must be a non-negative integer',
    'plugins.devnet.helia.dataDir: must be a non-empty path',
  ]));
  t.doesNotThrow(() => devnet().register(rootContainer.createChildContainer(), config({ chainId: 9, slotMs: 400, startSlot: 5, helia: { objectGet: false } })), 'a good section');
  // A network's options hold other plugins' keys too: only the devnet's are checked.
  t.same(readLiteSvmSettings('networks["sol"].options', { slotMs: 400, startSlot: '12', blockGasLimitTtlMs: 5 }), { slotMs: 400, startSlot: 12n });
  t.throws(() => readHeliaSettings('networks["files"].options', { helia: [] }), new ConfigError(['networks["files"].options.helia: must be an object']));
});

// --- the plugin in a container -----------------------------------------------------------------------

t.test('devnet() registers the anvil, bor and litesvm providers and reads plugins.devnet', async (t) => {
  const dev = devnet({ accounts: 2 });
  t.teardown(() => dev.stop());
  t.equal(dev.name, 'devnet');
  const container = rootContainer.createChildContainer();
  const config = resolveConfig({ networks: [{ name: 'x', families: ['evm'], upstreams: [{ embedded: 'anvil#c' }] }], plugins: { devnet: { accounts: 4, seed: false } } });
  dev.register(container, config);
  const providers = container.resolveAll(Tokens.EmbeddedUpstream);
  const kinds = providers.map((p) => p.kind);
  for (const kind of ['anvil', 'bor', 'litesvm']) t.ok(kinds.includes(kind), `provides ${kind}`);
  t.equal(new Set(kinds).size, kinds.length, 'each kind once');
  const started = await provider(providers, 'anvil').start('c', network({ chainId: 7 }));
  t.equal((await result<string[]>(started.url, 'eth_accounts')).length, 4, 'the config overrides code options');
  t.equal(await result(started.url, 'eth_chainId'), '0x7', 'the network overrides the config');
  t.equal(dev.instance('anvil#c')?.seed, undefined);
  const pid = dev.instance('anvil#c')?.anvil.pid ?? 0;
  await dev.stop();
  t.notOk(alive(pid), 'plugin.stop() stops what it started');
  t.equal(dev.instances().length, 0);
});

// --- bor ---------------------------------------------------------------------------------------------

const polygon = (await provider(plugin.providers, 'bor').start('default', network({}, 'polygon'))) as DevnetInstance;

t.test('the bor provider puts the shim in front of a chain-137 Anvil', async (t) => {
  t.equal(polygon.kind, 'bor');
  t.not(polygon.url, polygon.anvil.url);
  t.equal(polygon.bor?.url, polygon.url);
  t.equal(polygon.chainId, 137);
  t.equal(await result(polygon.url, 'eth_chainId'), '0x89');
  t.equal(polygon.getSeed().chainId, 137);
});

t.test('bor_getCurrentValidators answers from the dev accounts, shaped like Bor', async (t) => {
  const reply = await post(polygon.url, '{"jsonrpc":"2.0","method":"bor_getCurrentValidators","params":[], "id":1}');
  t.equal(reply.status, 200);
  const { result: validators } = reply.json as { result: { ID: number; signer: string; power: number; accum: number }[] };
  t.same(validators.map((v) => v.signer), polygon.getSeed().accounts);
  t.ok(validators.every((v) => Object.keys(v).join() === 'ID,signer,power,accum'), 'Bor key order');
  t.ok(validators.every((v) => typeof v.ID === 'number' && typeof v.power === 'number' && typeof v.accum === 'number'), 'plain numbers');
  t.equal(validators.reduce((sum, v) => sum + v.accum, 0), 0, 'priorities are centred');
  t.ok(validators.some((v) => v.accum < 0), 'one priority is negative');
  t.same(reply.json, { jsonrpc: '2.0', id: 1, result: validators });
  t.same((await call(polygon.url, 'bor_getCurrentValidators', [], 'abc')).result, validators, 'string ids');
  t.same((await post(polygon.url, { jsonrpc: '2.0', id: 2, method: 'bor_getCurrentValidators' })).json, { jsonrpc: '2.0', id: 2, result: validators }, 'params may be left out');
  t.same((await call(polygon.url, 'bor_getCurrentValidators', [1])).error, { code: -32602, message: 'too many arguments, want at most 0' });
});

t.test('everything else is forwarded to Anvil byte for byte', async (t) => {
  for (const body of [
    '{"jsonrpc":"2.0","id":9,"method":"eth_getBlockByNumber","params":["0x2",true]}',
    '{"jsonrpc":"2.0","id":"x","method":"eth_getLogs","params":[{"fromBlock":"0x0"}]}',
    '{"jsonrpc":"2.0","id":3,"method":"bor_getAuthor","params":["latest"]}',
    '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}]',
    '{"jsonrpc":"2.0","id":1,"method":',
  ]) {
    const direct = await post(polygon.anvil.url, body);
    const shimmed = await post(polygon.url, body);
    t.same([shimmed.status, shimmed.text], [direct.status, direct.text], body);
  }
  const reverted = await call(polygon.url, 'eth_call', [{ to: polygon.getSeed().contract.address, data: polygon.getSeed().revert.call }, 'latest']);
  t.equal(reverted.error?.code, 3);
  t.equal(reverted.error?.data, polygon.getSeed().revert.data);
});

t.test('batches: bor items answered here, the rest forwarded, in request order', async (t) => {
  const validators = polygon.bor?.validators;
  const reply = await post(polygon.url, [
    { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
    { jsonrpc: '2.0', id: 2, method: 'bor_getCurrentValidators', params: [] },
    { jsonrpc: '2.0', id: 3, method: 'eth_blockNumber', params: [] },
    { jsonrpc: '2.0', method: 'bor_getCurrentValidators', params: [] },
    { jsonrpc: '2.0', id: 5, method: 'bor_getCurrentValidators', params: ['0x1'] },
  ]);
  t.equal(reply.status, 200);
  t.same(reply.json, [
    { jsonrpc: '2.0', id: 1, result: '0x89' },
    { jsonrpc: '2.0', id: 2, result: validators },
    { jsonrpc: '2.0', id: 3, result: quantity(polygon.getSeed().latestBlock) },
    { jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'too many arguments, want at most 0' } },
  ], 'the notification gets no answer');
  const onlyBor = await post(polygon.url, [
    { jsonrpc: '2.0', id: 'a', method: 'bor_getCurrentValidators', params: [] },
    { jsonrpc: '2.0', id: 'b', method: 'bor_getCurrentValidators', params: [] },
  ]);
  t.same(onlyBor.json, [{ jsonrpc: '2.0', id: 'a', result: validators }, { jsonrpc: '2.0', id: 'b', result: validators }]);
});

t.test('startBorServer takes configured signers, and bor options configure the provider', async (t) => {
  const signers = [{ signer: '0x055BD801CA712B4DDF67DB8BC23FB6C8510D52B9', power: 4, ID: 7 }, '0x1ca971963bdb4ba2bf337c90660674acff5beb3f'];
  const shim = await startBorServer({ upstream: polygon.anvil.url, signers });
  t.teardown(() => shim.stop());
  t.same(shim.validators, [
    { ID: 7, signer: '0x055bd801ca712b4ddf67db8bc23fb6c8510d52b9', power: 4, accum: -1 },
    { ID: 2, signer: '0x1ca971963bdb4ba2bf337c90660674acff5beb3f', power: 1, accum: 1 },
  ]);
  t.same(await result(shim.url, 'bor_getCurrentValidators'), shim.validators);
  t.equal(await result(shim.url, 'eth_chainId'), '0x89');
  t.same(borValidators([{ signer: signers[1] as string, accum: -15 }]), [{ ID: 1, signer: signers[1], power: 1, accum: -15 }]);

  const dev = devnet();
  t.teardown(() => dev.stop());
  const custom = await provider(dev.providers, 'bor').start('custom', network({ chainId: 80002, signers, seed: false }));
  t.equal(await result(custom.url, 'eth_chainId'), quantity(80002));
  t.same(await result(custom.url, 'bor_getCurrentValidators'), shim.validators);
});

t.test('stopping an instance stops the shim and Anvil', async (t) => {
  const dev = devnet({ seed: false });
  const instance = await provider(dev.providers, 'bor').start('stopme', network()) as DevnetInstance;
  const pid = instance.anvil.pid;
  t.ok(alive(pid));
  await instance.stop();
  t.throws(() => process.kill(pid, 0), 'Anvil is gone');
  t.equal(instance.bor?.server.listening, false, 'the shim no longer listens');
  t.equal(dev.instances().length, 0);
});
