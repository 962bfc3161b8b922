import 'reflect-metadata'; // tsyringe is imported directly below, before the core (which loads it too)
import t, { type Test } from 'tap';
import { container as rootContainer } from 'tsyringe';
import {
  ConfigError,
  Errors,
  GatewayError,
  resolveConfig,
  type JsonRpcResponse,
} from '../core/index.js';
import {
  Tokens,
  type Clock,
  type RequestContext,
} from '../core/plugin-api.js';
import { answerView, type AnswerView, type LimitsInput, type MethodDefinition, type NetworkFamily, type NetworkRuntime } from '../core/family-api.js';
import { evmFamily, type EvmFamilyOptions } from '../plugins/evm/index.js';
import { BLOCK_GAS_LIMIT_STATE_KEY } from '../plugins/evm/block-gas-limit.js';
import { blockNumberHead, isRevert } from '../plugins/evm/answers.js';
import { countLogFilterParams } from '../plugins/evm/get-logs-limits.js';

/** A node's answer as the `checkResult` stage hands it to a hook: a view on its bytes. */
const view = (response: JsonRpcResponse): AnswerView => answerView(Buffer.from(JSON.stringify(response)));
import { createEvmFamily } from '../plugins/evm/family.js';
import { resolveEvmSettings } from '../plugins/evm/options.js';
import { polygonFamily } from '../plugins/polygon/index.js';

const ADDRESS = `0x${'a1'.repeat(20)}`;
const TOPIC = `0x${'c3'.repeat(32)}`;
// The hooks ignore the call's context: limits are pure functions of params and network state.
const ctx = {} as RequestContext;

class TestClock implements Clock {
  constructor(public ms = 1_000_000) {}
  now(): number {
    return this.ms;
  }
}

/** A NetworkRuntime whose `rpc` answers with `answer` and records every call. */
function fakeNetwork(answer: (method: string, params: readonly unknown[]) => Promise<unknown>): NetworkRuntime & { calls: Array<[string, readonly unknown[]]> } {
  const calls: Array<[string, readonly unknown[]]> = [];
  return {
    name: 'test',
    state: new Map<string, unknown>(),
    options: {},
    calls,
    rpc(method, params) {
      calls.push([method, params]);
      return answer(method, params);
    },
  };
}

const block = (gasLimit: string): Promise<unknown> => Promise.resolve({ number: '0x10', gasLimit });

function method(name: string, options: EvmFamilyOptions = {}): MethodDefinition {
  const found = createEvmFamily(resolveEvmSettings(options)).methods.find((m) => m.name === name);
  if (found === undefined) throw new Error(`no ${name}`);
  return found;
}

function limits(definition: MethodDefinition, params: unknown, network: NetworkRuntime = fakeNetwork(() => Promise.reject(new Error('unused')))): unknown {
  const input: LimitsInput = { params, ctx, network };
  return definition.limits!(input);
}

/** The GatewayError `fn` throws, as `{ code, message }` (fails the test if it throws anything else or nothing). */
function thrown(t: Test, fn: () => unknown): { code: number; message: string } | undefined {
  try {
    fn();
  } catch (error) {
    t.ok(GatewayError.is(error), 'throws a GatewayError');
    if (!GatewayError.is(error)) return undefined;
    t.equal(error.entry, Errors.LIMIT_EXCEEDED, 'from the LIMIT_EXCEEDED entry');
    return { code: error.code, message: error.message };
  }
  t.fail('did not throw');
  return undefined;
}

const addresses = (n: number): string[] => Array.from({ length: n }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);

// --- eth_getLogs ----------------------------------------------------------------------------------

t.test('countLogFilterParams counts every address and topic value, nested arrays included', async (t) => {
  t.equal(countLogFilterParams({}), 0);
  t.equal(countLogFilterParams({ fromBlock: '0x1', toBlock: 'latest' }), 0, 'block bounds are not counted');
  t.equal(countLogFilterParams({ address: ADDRESS }), 1);
  t.equal(countLogFilterParams({ address: [ADDRESS, ADDRESS, ADDRESS] }), 3);
  t.equal(countLogFilterParams({ topics: [TOPIC, null, [TOPIC, TOPIC, null], []] }), 3, 'null wildcards are not values');
  t.equal(countLogFilterParams({ address: [ADDRESS, ADDRESS], topics: [[TOPIC, TOPIC], TOPIC] }), 5);
  t.equal(countLogFilterParams({ address: null, topics: null }), 0);
  t.equal(countLogFilterParams(undefined), 0);
});

t.test('eth_getLogs refuses more than 5,000 addresses and topics', async (t) => {
  const getLogs = method('eth_getLogs');
  t.equal(limits(getLogs, [{ address: addresses(5000) }]), undefined, '5,000 addresses pass unchanged');
  t.equal(limits(getLogs, [{ address: addresses(4000), topics: [addresses(500).map(() => TOPIC), addresses(500).map(() => TOPIC)] }]), undefined, '5,000 values in all pass');
  t.same(thrown(t, () => limits(getLogs, [{ address: addresses(5001) }])), { code: -32005, message: 'query has 5001 addresses and topics, more than the limit of 5000' });
  t.same(thrown(t, () => limits(getLogs, [{ address: addresses(4999), topics: [TOPIC, [TOPIC, TOPIC]] }])), {
    code: -32005,
    message: 'query has 5002 addresses and topics, more than the limit of 5000',
  });
});

t.test('the eth_getLogs parameter limit is an option', async (t) => {
  const getLogs = method('eth_getLogs', { getLogsMaxParams: 2 });
  t.equal(limits(getLogs, [{ address: [ADDRESS], topics: [TOPIC] }]), undefined);
  t.same(thrown(t, () => limits(getLogs, [{ address: [ADDRESS], topics: [[TOPIC, TOPIC]] }])), { code: -32005, message: 'query has 3 addresses and topics, more than the limit of 2' });
});

t.test('eth_getLogs answers of more than 10,000 logs become the spec error', async (t) => {
  const { checkResult } = method('eth_getLogs');
  const answer = (result: unknown): AnswerView => view({ jsonrpc: '2.0', id: 1, result });
  const log = { address: ADDRESS, topics: [TOPIC], data: '0x' };
  t.doesNotThrow(() => checkResult!(answer(Array.from({ length: 10_000 }, () => log)), ctx), '10,000 logs pass');
  t.doesNotThrow(() => checkResult!(answer([]), ctx), 'no logs pass');
  t.doesNotThrow(() => checkResult!(answer(null), ctx), 'a non-array result passes');
  t.doesNotThrow(() => checkResult!(view({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'invalid block range params' } }), ctx), 'a node error passes');
  t.same(thrown(t, () => checkResult!(answer(Array.from({ length: 10_001 }, () => log)), ctx)), { code: -32005, message: 'query returned more than 10000 results' });

  const small = method('eth_getLogs', { getLogsMaxResults: 2 });
  t.same(thrown(t, () => small.checkResult!(answer([log, log, log]), ctx)), { code: -32005, message: 'query returned more than 2 results' });
});

t.test('eth_getLogs runs at most 10 seconds and then answers the spec timeout error', async (t) => {
  const getLogs = method('eth_getLogs');
  t.equal(getLogs.timeoutMs, 10_000);
  const error = getLogs.onTimeout!();
  t.ok(GatewayError.is(error));
  t.equal(error.entry, Errors.LIMIT_EXCEEDED);
  t.same(error.toJSON(), { code: -32005, message: 'query timeout exceeded' });
  t.equal(method('eth_getLogs', { getLogsTimeoutMs: 2500 }).timeoutMs, 2500, 'the duration is an option');
  t.equal(method('eth_getBlockByNumber').timeoutMs, undefined, 'other methods keep the upstream timeout');
});

// --- gas cap ----------------------------------------------------------------------------------------

const GAS_LIMIT = '0x1c9c380'; // 30,000,000
const CAP = '0x11e1a300'; // 300,000,000

for (const name of ['eth_call', 'eth_estimateGas']) {
  t.test(`${name}: gas above 10x the block gas limit is lowered to the cap`, async (t) => {
    const definition = method(name);
    const network = fakeNetwork(() => block(GAS_LIMIT));
    const call = { from: ADDRESS, to: ADDRESS, gas: '0x11e1a301', data: '0x' };
    const params = [call, 'latest', { [ADDRESS]: { balance: '0x1' } }];
    const capped = await limits(definition, params, network);
    t.same(capped, [{ from: ADDRESS, to: ADDRESS, gas: CAP, data: '0x' }, 'latest', { [ADDRESS]: { balance: '0x1' } }], 'new params, gas capped, the rest kept');
    t.equal(call.gas, '0x11e1a301', "the client's call object is not modified");
    t.same(network.calls, [['eth_getBlockByNumber', ['latest', false]]], 'the gas limit was asked once');

    t.equal(await limits(definition, [{ to: ADDRESS, gas: CAP }, 'latest'], network), undefined, 'gas exactly at the cap passes unchanged');
    t.equal(await limits(definition, [{ to: ADDRESS, gas: '0x5208' }, 'latest'], network), undefined, 'a small gas passes unchanged');
    t.same(await limits(definition, [{ to: ADDRESS, gas: '0x0011e1a301' }, 'latest'], network), [{ to: ADDRESS, gas: CAP }, 'latest'], 'leading zeros are read as a number');
    t.equal(network.calls.length, 1, 'the cached gas limit served the other calls');
  });
}

t.test('a call without gas passes at once, without asking the network', async (t) => {
  const network = fakeNetwork(() => block(GAS_LIMIT));
  t.equal(limits(method('eth_call'), [{ to: ADDRESS, data: '0x' }, 'latest'], network), undefined);
  t.equal(limits(method('eth_call'), [{ to: ADDRESS, gas: null }, 'latest'], network), undefined);
  t.equal(limits(method('eth_estimateGas'), [{ to: ADDRESS }], network), undefined);
  t.same(network.calls, []);
});

t.test('the block gas limit is cached for the TTL, per network, in the network state', async (t) => {
  const clock = new TestClock();
  const definition = method('eth_call', { clock, blockGasLimitTtlMs: 3000 });
  let gasLimit = GAS_LIMIT;
  const network = fakeNetwork(() => block(gasLimit));
  const over = [{ to: ADDRESS, gas: '0xffffffffff' }, 'latest'];
  t.same(await limits(definition, over, network), [{ to: ADDRESS, gas: CAP }, 'latest']);
  t.ok(network.state.has(BLOCK_GAS_LIMIT_STATE_KEY), 'kept in the network state');
  gasLimit = '0x2faf080'; // 50,000,000
  clock.ms += 2999;
  t.same(limits(definition, over, network), [{ to: ADDRESS, gas: CAP }, 'latest'], 'still fresh: answered synchronously from the cache');
  t.equal(network.calls.length, 1);
  clock.ms += 1;
  t.same(await limits(definition, over, network), [{ to: ADDRESS, gas: '0x1dcd6500' }, 'latest'], 'expired: the new gas limit (500,000,000 cap) is learned');
  t.equal(network.calls.length, 2);

  const other = fakeNetwork(() => block('0x989680')); // 10,000,000
  t.same(await limits(definition, over, other), [{ to: ADDRESS, gas: '0x5f5e100' }, 'latest'], 'another network has its own cache');
});

t.test('concurrent callers share one in-flight fetch of the gas limit', async (t) => {
  let release: (value: unknown) => void = () => undefined;
  const network = fakeNetwork(() => new Promise((resolve) => (release = resolve)));
  const definition = method('eth_estimateGas');
  const over = [{ to: ADDRESS, gas: '0xffffffffff' }];
  const pending = [limits(definition, over, network), limits(definition, over, network), limits(definition, over, network)];
  t.equal(network.calls.length, 1, 'one fetch for three calls');
  release({ gasLimit: GAS_LIMIT });
  t.same(await Promise.all(pending), [
    [{ to: ADDRESS, gas: CAP }],
    [{ to: ADDRESS, gas: CAP }],
    [{ to: ADDRESS, gas: CAP }],
  ]);
});

t.test('when the gas limit cannot be learned the call goes unchanged, and the failure is cached for the TTL', async (t) => {
  const clock = new TestClock();
  const definition = method('eth_call', { clock });
  const over = [{ to: ADDRESS, gas: '0xffffffffff' }, 'latest'];
  const failing = fakeNetwork(() => Promise.reject(new Error('network unavailable')));
  t.equal(await limits(definition, over, failing), undefined, 'rpc failed: forwarded unchanged');
  t.equal(limits(definition, over, failing), undefined, 'not asked again within the TTL');
  t.equal(failing.calls.length, 1);
  clock.ms += 5000;
  t.equal(await limits(definition, over, failing), undefined, 'asked again after the TTL (5 s by default)');
  t.equal(failing.calls.length, 2);

  for (const answer of [null, {}, { gasLimit: 30_000_000 }, { gasLimit: 'lots' }, { gasLimit: '0x0' }]) {
    const odd = fakeNetwork(() => Promise.resolve(answer));
    t.equal(await limits(definition, over, odd), undefined, `block ${JSON.stringify(answer)}: forwarded unchanged`);
  }
});

t.test('the cap is an option, in percent of the block gas limit', async (t) => {
  const definition = method('eth_call', { gasCapPercent: 150 });
  const network = fakeNetwork(() => block(GAS_LIMIT));
  t.same(await limits(definition, [{ gas: '0x2faf080' }, 'latest'], network), [{ gas: '0x2aea540' }, 'latest'], '50M is lowered to 45M');
});

// --- settings and plugins -----------------------------------------------------------------------

t.test('settings: spec defaults, code options, and the config section over both', async (t) => {
  const defaults = resolveEvmSettings();
  t.same(
    { ...defaults, clock: undefined },
    { getLogsMaxParams: 5000, getLogsMaxResults: 10_000, getLogsTimeoutMs: 10_000, gasCapPercent: 1000, blockGasLimitTtlMs: 5000, filterIdleMs: 300_000, filtersPerKey: 100, resendWindowMs: 60_000, debug: {}, credits: {}, clock: undefined },
  );
  const merged = resolveEvmSettings({ getLogsMaxResults: 20_000, getLogsMaxParams: 100 }, { getLogsMaxParams: 200 });
  t.equal(merged.getLogsMaxResults, 20_000, 'from code');
  t.equal(merged.getLogsMaxParams, 200, 'the config wins over code');
  const error = t.throws(() => resolveEvmSettings({ gasCapPercent: 0 }, { getLogsTimeoutMs: '10s', getLogsLimit: 1 })) as ConfigError;
  t.ok(error instanceof ConfigError);
  t.same(error.problems, ['evmFamily().gasCapPercent: must be >= 1', 'plugins.evm.getLogsLimit: is not a known field', 'plugins.evm.getLogsTimeoutMs: must be integer']);
});

function registered(plugin: ReturnType<typeof evmFamily>, plugins: Record<string, Record<string, unknown>> = {}): NetworkFamily[] {
  const container = rootContainer.createChildContainer();
  plugin.register(container, resolveConfig({ networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:1' }] }], plugins }));
  return container.resolveAll<NetworkFamily>(Tokens.Family);
}

t.test('evmFamily registers the evm family, configured from the config section', async (t) => {
  const plugin = evmFamily({ getLogsTimeoutMs: 4000 });
  t.equal(plugin.name, 'evm');
  const [family, ...more] = registered(plugin, { evm: { getLogsMaxResults: 50 } });
  t.equal(more.length, 0);
  t.equal(family!.name, 'evm');
  t.same(family!.probe, { method: 'eth_blockNumber', params: [], head: blockNumberHead });
  t.equal(family!.probe!.head!('0x1b4'), 436, 'the probe reads the head as a block number');
  t.equal(family!.probe!.head!('latest'), undefined);
  t.equal(family!.isCallError!({ code: 3, message: 'execution reverted: no' }), isRevert({ code: 3 }), 'reverts are the family\'s to tell');
  t.equal(family!.isCallError!({ code: -32000, message: 'header not found' }), false, 'other node errors are failures');
  const getLogs = family!.methods.find((m) => m.name === 'eth_getLogs')!;
  t.equal(getLogs.timeoutMs, 4000);
  t.same(thrown(t, () => getLogs.checkResult!(view({ jsonrpc: '2.0', id: 1, result: new Array(51).fill(null) }), ctx)), { code: -32005, message: 'query returned more than 50 results' });
  t.throws(() => registered(evmFamily(), { evm: { gasCap: 5 } }), ConfigError, 'an unknown setting stops the gateway from starting');
});

t.test('polygonFamily registers the polygon family', async (t) => {
  const plugin = polygonFamily();
  t.equal(plugin.name, 'polygon');
  const [family] = registered(plugin);
  t.equal(family!.name, 'polygon');
  t.same(family!.methods.map((m) => [m.name, m.credits, m.failover]), [['bor_getCurrentValidators', 80, true]]);
});
