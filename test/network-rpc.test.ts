/**
 * A network's own calls (`Network.rpc`: a block's gas limit, a cache's head) take the path a client's
 * call takes: the selector's route and breakers, failover, outcomes fed back to the selector. The
 * selector's probes and the readiness check share `probeUpstream`, which classifies an answer as a
 * call's attempt is classified.
 */
import 'reflect-metadata';
import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGateway, Errors, GatewayError, type Gateway } from '../core/index.js';
import { probeUpstream } from '../core/upstream-api.js';
import { Tokens } from '../core/plugin-api.js';
import type { UpstreamSettings } from '../core/contracts/upstream.js';
import type { FailoverSelector } from '../core/upstream/failover-selector.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { startChaosUpstream, upstreamView, type ChaosMode, type ChaosUpstream } from './helpers/failover-upstreams.js';
import { until } from './helpers/until.js';
import { startKuboStub } from './helpers/kubo-stub.js';
import { ipfs } from '../plugins/ipfs/index.js';

type Node = { readonly name: string; readonly mode: ChaosMode; readonly weight?: number; readonly role?: UpstreamSettings['role'] };

/** A gateway over chaos upstreams named as given; probes off unless `probeMs`, breakers open at the first failure. */
async function gatewayOver(t: Test, nodes: readonly Node[], probeMs = 0): Promise<{ gateway: Gateway; upstreams: Map<string, ChaosUpstream>; selector: FailoverSelector }> {
  const upstreams = new Map<string, ChaosUpstream>();
  for (const node of nodes) upstreams.set(node.name, await startChaosUpstream(undefined, node.mode));
  const gateway = await createGateway({
    config: {
      log: { level: 'silent' },
      networks: [{
        name: 'eth',
        families: ['evm'],
        upstreams: nodes.map((node) => ({ name: node.name, url: upstreams.get(node.name)!.url, weight: node.weight ?? 1, role: node.role ?? 'primary' })),
        failover: { probe: { intervalMs: probeMs, timeoutMs: 1000 }, breaker: { failureThreshold: 1, cooldownMs: 60_000 } },
      }],
    },
    plugins: [evmFamily()],
  });
  t.teardown(async () => {
    await gateway.close();
    for (const upstream of upstreams.values()) await upstream.close();
  });
  return { gateway, upstreams, selector: gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector };
}

t.test("Network.rpc asks healthy upstreams before one the selector took out", async (t) => {
  const methods: string[] = [];
  const hanging = createServer((req) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => methods.push((JSON.parse(Buffer.concat(chunks).toString()) as { method: string }).method));
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const good = await startTinyUpstream();
  const gateway = await createGateway({
    config: {
      log: { level: 'silent' },
      networks: [{
        name: 'eth',
        families: ['evm'],
        upstreams: [{ name: 'hanging', url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}` }, { name: 'good', url: good.url }],
        failover: { probe: { intervalMs: 50, timeoutMs: 100 }, breaker: { failureThreshold: 1, cooldownMs: 60_000 } },
      }],
      upstreamDefaults: { timeoutMs: 20_000 },
    },
    plugins: [evmFamily()],
  });
  t.teardown(async () => {
    await gateway.close();
    hanging.closeAllConnections();
    await new Promise<void>((resolve) => hanging.close(() => resolve()));
    await good.close();
  });
  const selector = gateway.container.resolve(Tokens.UpstreamSelector);
  await until('the probes took the hanging node out', () => selector.status!().find((u) => u.name === 'hanging')?.healthy === false, 10_000);

  const network = gateway.networks.get('eth')!;
  t.equal(await network.rpc('eth_chainId', []), '0x1', 'answered by the healthy node');
  t.notOk(methods.includes('eth_chainId'), 'the hanging node was not asked');
});

t.test('a failure to answer moves the lookup on, and the selector learns it as from a call', async (t) => {
  // The heavier node leads every route while its breaker is closed.
  const { gateway, upstreams, selector } = await gatewayOver(t, [{ name: 'broken', mode: 'http-500', weight: 10 }, { name: 'good', mode: 'echo' }]);
  const network = gateway.networks.get('eth')!;
  t.equal(await network.rpc('eth_chainId', []), '0x1', 'the second upstream answered');
  t.same(upstreams.get('broken')!.received, ['eth_chainId'], 'the first upstream was tried');
  const broken = upstreamView(selector, 'eth', 'broken');
  t.match(broken.counters, { attempts: 1, failures: 1 }, 'its failure was counted');
  t.equal(broken.breaker.state, 'open', 'and opened its breaker');
  t.match(upstreamView(selector, 'eth', 'good').counters, { attempts: 1, retries: 1, successes: 1 }, 'the retry was counted');

  t.equal(await network.rpc('eth_chainId', []), '0x1');
  t.same(upstreams.get('broken')!.received, ['eth_chainId'], 'an open breaker keeps the next lookup away');
});

t.test("a node's error is its answer: the lookup rejects with it, and no other node is asked", async (t) => {
  const { gateway, upstreams, selector } = await gatewayOver(t, [{ name: 'erring', mode: 'node-error', weight: 10 }, { name: 'good', mode: 'echo' }]);
  await t.rejects(gateway.networks.get('eth')!.rpc('eth_getBlockByNumber', ['0x10', false]), /eth_getBlockByNumber failed on erring: header not found/);
  t.same(upstreams.get('good')!.received, [], 'not retried elsewhere');
  t.equal(upstreamView(selector, 'eth', 'erring').breaker.state, 'closed', 'an answer is no failure of the node');
});

t.test('no upstream may serve: UPSTREAM_UNAVAILABLE, and a lookup never reaches a partner', async (t) => {
  const { gateway, upstreams } = await gatewayOver(t, [{ name: 'broken', mode: 'http-500' }, { name: 'partner', mode: 'echo', role: 'partner' }]);
  const network = gateway.networks.get('eth')!;
  const first = await network.rpc('eth_chainId', []).then(() => undefined, (error: unknown) => error);
  t.ok(first instanceof GatewayError && first.code === Errors.UPSTREAM_UNAVAILABLE.code, 'the failure is coded');
  const second = await network.rpc('eth_chainId', []).then(() => undefined, (error: unknown) => error);
  t.ok(second instanceof GatewayError && second.code === Errors.UPSTREAM_UNAVAILABLE.code, 'refused while the breaker is open');
  t.same(upstreams.get('broken')!.received, ['eth_chainId'], 'the open breaker kept the second lookup away');
  t.same(upstreams.get('partner')!.received, [], 'no plan makes a lookup eligible for a partner');
});

t.test('probes classify answers as calls do, and feed the breaker', async (t) => {
  const { gateway, upstreams, selector } = await gatewayOver(t, [{ name: 'busy', mode: 'capacity' }, { name: 'good', mode: 'echo' }], 50);
  await until('a probe failed on the busy node', () => upstreamView(selector, 'eth', 'busy').counters.probeFailures > 0);
  const probeFailure = (upstreamView(selector, 'eth', 'busy').status.details as { lastFailure: { message: string } }).lastFailure.message;
  t.equal(upstreamView(selector, 'eth', 'busy').breaker.state, 'open', 'the probe failure opened the breaker');

  // The same answer to a call's attempt, through the sender: the same failure.
  const network = gateway.networks.get('eth')!;
  const busy = network.upstreams.find((u) => u.name === 'busy')!;
  const probed = await probeUpstream(network, busy, { timeoutMs: 1000 });
  t.match(probed, { ok: false, failure: { kind: 'overloaded' } }, 'a capacity error is an overloaded upstream');
  const reply = await busy.request({ body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
  const callFailure = network.protocol.inspect(reply, gateway.createContext({ transport: 'test', network, credentials: { apiKey: undefined }, call: { method: 'eth_chainId', params: [] } }));
  t.equal(probeFailure, `probe failed: ${callFailure!.message}`, 'the probe failed with the message a call would have');

  const good = await probeUpstream(network, network.upstreams.find((u) => u.name === 'good')!, { timeoutMs: 1000 });
  t.match(good, { ok: true, head: 1 }, "a good answer reports the family's head (eth_blockNumber 0x1)");
  t.ok(upstreams.get('good')!.received.includes('eth_blockNumber'), "the probe is the family's health call");
});

t.test('a network without a health call (the file-storage API): any answer its protocol accepts will do, and it has no rpc()', async (t) => {
  const answering = await startKuboStub((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found'));
  const behindProxy = await startKuboStub((_req, res) => res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway'));
  const gateway = await createGateway({
    config: {
      log: { level: 'silent' },
      networks: [{ name: 'files', families: ['ipfs'], upstreams: [{ name: 'answering', url: answering.url }, { name: 'proxy', url: behindProxy.url }] }],
    },
    plugins: [ipfs()],
  });
  t.teardown(async () => {
    await gateway.close();
    await answering.close();
    await behindProxy.close();
  });
  const network = gateway.networks.get('files')!;
  t.match(await probeUpstream(network, network.upstreams[0]!, { timeoutMs: 1000 }), { ok: true, head: undefined }, "kubo's 404 is an answer");
  t.match(await probeUpstream(network, network.upstreams[1]!, { timeoutMs: 1000 }), { ok: false, failure: { kind: 'status', status: 502 } }, "a proxy's 502 is no answer, as for a call");
  await t.rejects(network.rpc('version', []), /does not speak JSON-RPC/);
});
