import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MethodDefinition } from '../core/family-api.js';
import { compileParams, type ParamsValidator } from '../core/network/compile-params.js';
import { createEvmFamily } from '../plugins/evm/family.js';
import { resolveEvmSettings } from '../plugins/evm/options.js';
import { createPolygonFamily } from '../plugins/polygon/index.js';

const family = createEvmFamily(resolveEvmSettings());
const validators = new Map<string, ParamsValidator>(family.methods.map((m: MethodDefinition) => [m.name, compileParams(m)]));
const validate = (method: string, params: unknown): string | undefined => {
  const validator = validators.get(method);
  if (validator === undefined) throw new Error(`the evm family does not offer ${method}`);
  return validator(params);
};

const ADDRESS = `0x${'a1'.repeat(20)}`;
const HASH = `0x${'b2'.repeat(32)}`;
const TOPIC = `0x${'c3'.repeat(32)}`;

const M = {
  address: 'must be a 20-byte address (0x followed by 40 hex digits)',
  hash: 'must be a 32-byte hash (0x followed by 64 hex digits)',
  quantity: 'must be a hex quantity (0x followed by hex digits)',
  data: 'must be hex data (0x followed by an even number of hex digits)',
  blockTag: 'must be a hex block number or a block tag (latest, earliest, pending, safe, finalized)',
  blockTagNoSafe: 'must be a hex block number or a block tag (latest, earliest, pending, finalized; safe is not supported by this method)',
  blockId: 'must be a hex block number, a 32-byte block hash or a block tag (latest, earliest, pending, safe, finalized)',
};

interface Examples {
  readonly valid: readonly unknown[];
  readonly invalid: ReadonlyArray<readonly [unknown, string]>;
}

const noParams: Examples = {
  valid: [[]],
  invalid: [
    [[1], 'too many arguments, want at most 0'],
    ['latest', 'params must be an array'],
  ],
};

/** Block identifiers (EIP-1898) accepted and refused as argument `index` named `name`. */
function blockIdExamples(prefix: readonly unknown[], index: number, name: string): Examples {
  const at = (block: unknown): unknown[] => [...prefix, block];
  const where = `invalid argument ${index} (${name}):`;
  return {
    valid: [at('latest'), at('safe'), at('finalized'), at('0x0'), at('0x1b4'), at('0x01'), at(HASH), at({ blockHash: HASH }), at({ blockHash: HASH, requireCanonical: true }), at({ blockNumber: '0x1' }), at({ blockNumber: 'latest' })],
    invalid: [
      [at('head'), `${where} ${M.blockId}`],
      [at('1'), `${where} ${M.blockId}`],
      [at(12), `${where} must be string or object`],
      [at({}), `${where} missing required field "blockNumber"`],
      [at({ blockHash: HASH, blockNumber: '0x1' }), `${where} cannot specify both blockHash and blockNumber, choose one or the other`],
      [at({ blockHash: '0x12' }), `${where} blockHash ${M.hash}`],
      [at({ blockNumber: null }), `${where} blockNumber must not be null`],
      [at({ blockNumber: 'newest' }), `${where} blockNumber ${M.blockTag}`],
      [at({ blockHash: HASH, requireCanonical: 'yes' }), `${where} requireCanonical must be boolean or null`],
    ],
  };
}

function merge(...parts: Examples[]): Examples {
  return { valid: parts.flatMap((p) => p.valid), invalid: parts.flatMap((p) => p.invalid) };
}

const callExamples = (method: string, extra: readonly unknown[] = []): Examples => ({
  valid: [
    [{ to: ADDRESS, data: '0x70a08231' }, 'latest', ...extra],
    [{ to: ADDRESS, input: '0x70a08231' }, 'latest', ...extra],
    [{ from: ADDRESS, to: ADDRESS, gas: '0x5208', gasPrice: '0x1', value: '0x0', data: '0x' }, '0x10', ...extra],
    [{ to: ADDRESS, maxFeePerGas: '0x2', maxPriorityFeePerGas: '0x1' }, { blockHash: HASH }, ...extra],
    // viem and ethers add fields the gateway does not check; nodes accept them.
    [{ to: ADDRESS, chainId: '0x1', type: '0x2', nonce: '0x0', accessList: [], blobVersionedHashes: [HASH], authorizationList: [] }, 'latest', ...extra],
    [{ to: null, from: null, gas: null, data: null }, 'pending', ...extra],
  ],
  invalid: [
    [[{ from: '0x1234' }, 'latest'], `invalid argument 0 (call): from ${M.address}`],
    [[{ to: `${ADDRESS}00` }, 'latest'], `invalid argument 0 (call): to ${M.address}`],
    [[{ to: ADDRESS, gas: 21000 }, 'latest'], 'invalid argument 0 (call): gas must be string or null'],
    [[{ to: ADDRESS, gas: '21000' }, 'latest'], `invalid argument 0 (call): gas ${M.quantity}`],
    [[{ to: ADDRESS, value: '0x' }, 'latest'], `invalid argument 0 (call): value ${M.quantity}`],
    [[{ to: ADDRESS, data: '0x123' }, 'latest'], `invalid argument 0 (call): data ${M.data}`],
    [[{ to: ADDRESS, input: 'abcd' }, 'latest'], `invalid argument 0 (call): input ${M.data}`],
    [['0x70a08231', 'latest'], 'invalid argument 0 (call): must be object'],
    [[{ to: ADDRESS }, 'latest', {}, {}, {}], `too many arguments, want at most ${method === 'eth_createAccessList' ? 2 : 4}`],
  ],
});

/** Valid and invalid params of every method of the evm family; invalid ones with the exact message. */
const examples: Record<string, Examples> = {
  eth_getLogs: {
    valid: [
      [{}],
      [{ fromBlock: '0x1', toBlock: 'latest' }],
      [{ fromBlock: 'earliest', toBlock: 'finalized', address: ADDRESS }],
      [{ address: [ADDRESS, ADDRESS], topics: [TOPIC] }],
      [{ blockHash: HASH, topics: [null, [TOPIC, null], []] }],
      [{ topics: [TOPIC, TOPIC, TOPIC, TOPIC] }],
      [{ blockHash: HASH, fromBlock: null, toBlock: null }],
      [{ address: null, topics: null, fromBlock: null }],
    ],
    invalid: [
      [[{ blockHash: HASH, fromBlock: '0x1' }], 'invalid argument 0 (filter): cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other'],
      [[{ blockHash: HASH, toBlock: 'latest' }], 'invalid argument 0 (filter): cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other'],
      [[{ fromBlock: 'newest' }], `invalid argument 0 (filter): fromBlock ${M.blockTag}`],
      [[{ toBlock: 7 }], 'invalid argument 0 (filter): toBlock must be string or null'],
      [[{ blockHash: '0x00' }], `invalid argument 0 (filter): blockHash ${M.hash}`],
      [[{ address: '0x12' }], `invalid argument 0 (filter): address ${M.address}`],
      [[{ address: [ADDRESS, 'nope'] }], `invalid argument 0 (filter): address.1 ${M.address}`],
      [[{ address: 5 }], 'invalid argument 0 (filter): address must be string or array or null'],
      [[{ topics: [null, null, null, null, null] }], 'invalid argument 0 (filter): topics must NOT have more than 4 items'],
      [[{ topics: ['0x12'] }], 'invalid argument 0 (filter): topics.0 must be a 32-byte topic (0x followed by 64 hex digits)'],
      [[{ topics: [[TOPIC, '0x12']] }], `invalid argument 0 (filter): topics.0.1 ${M.hash}`],
      [[{ topics: TOPIC }], 'invalid argument 0 (filter): topics must be array or null'],
      [[], 'missing value for required argument 0 (filter)'],
      [['latest'], 'invalid argument 0 (filter): must be object'],
      [[{}, {}], 'too many arguments, want at most 1'],
    ],
  },
  eth_getUncleByBlockNumberAndIndex: {
    valid: [['latest', '0x0'], ['finalized', '0x1'], ['earliest', '0x0'], ['pending', '0x0'], ['0x1b4', '0x0']],
    invalid: [
      [['safe', '0x0'], `invalid argument 0 (block): ${M.blockTagNoSafe}`],
      [['0x1b4'], 'missing value for required argument 1 (index)'],
      [['0x1b4', 0], 'invalid argument 1 (index): must be string'],
      [['0x1b4', '1'], `invalid argument 1 (index): ${M.quantity}`],
    ],
  },
  eth_getUncleByBlockHashAndIndex: {
    valid: [[HASH, '0x0']],
    invalid: [
      [['latest', '0x0'], `invalid argument 0 (blockHash): ${M.hash}`],
      [[HASH], 'missing value for required argument 1 (index)'],
      [[HASH, '0xg'], `invalid argument 1 (index): ${M.quantity}`],
    ],
  },
  eth_getTransactionByBlockNumberAndIndex: {
    valid: [['0x1', '0x0'], ['safe', '0x2'], ['latest', '0x00']],
    invalid: [
      [['0x1'], 'missing value for required argument 1 (index)'],
      [['one', '0x0'], `invalid argument 0 (block): ${M.blockTag}`],
      [['0x1', null], 'invalid argument 1 (index): must be string'],
    ],
  },
  eth_getTransactionByHash: {
    valid: [[HASH], [HASH.toUpperCase().replace('0X', '0x')]],
    invalid: [
      [[], 'missing value for required argument 0 (transactionHash)'],
      [[HASH.slice(0, 64)], `invalid argument 0 (transactionHash): ${M.hash}`],
      [[HASH, HASH], 'too many arguments, want at most 1'],
    ],
  },
  eth_getTransactionReceipt: {
    valid: [[HASH]],
    invalid: [
      [[], 'missing value for required argument 0 (transactionHash)'],
      [[ADDRESS], `invalid argument 0 (transactionHash): ${M.hash}`],
    ],
  },
  eth_call: merge(callExamples('eth_call', [{ [ADDRESS]: { balance: '0x1' } }]), blockIdExamples([{ to: ADDRESS }], 1, 'block'), {
    valid: [[{ to: ADDRESS }], [{ to: ADDRESS }, 'latest', {}, { time: '0x1' }], [{ to: ADDRESS }, 'latest', null, null]],
    invalid: [
      [[], 'missing value for required argument 0 (call)'],
      [[{ to: ADDRESS }, 'latest', 'override'], 'invalid argument 2 (stateOverride): must be object or null'],
      [[{ to: ADDRESS }, 'latest', {}, []], 'invalid argument 3 (blockOverrides): must be object or null'],
    ],
  }),
  eth_getBlockByNumber: {
    valid: [['latest', false], ['0x0', true], ['safe', true], ['finalized', false], ['pending', false], ['earliest', true], ['0x3e8', true]],
    invalid: [
      [['latest'], 'missing value for required argument 1 (fullTransactions)'],
      [['latest', 'true'], 'invalid argument 1 (fullTransactions): must be boolean'],
      [[1, false], 'invalid argument 0 (block): must be string'],
      [['latest!', false], `invalid argument 0 (block): ${M.blockTag}`],
    ],
  },
  eth_createAccessList: merge(callExamples('eth_createAccessList'), blockIdExamples([{ to: ADDRESS }], 1, 'block'), {
    valid: [[{ to: ADDRESS }], [{ from: ADDRESS, to: ADDRESS, data: '0x', gasPrice: '0x1' }, 'latest']],
    invalid: [
      [[], 'missing value for required argument 0 (call)'],
      [[{ to: ADDRESS, maxFeePerGas: '0x2' }], 'invalid argument 0 (call): "maxFeePerGas" requires "maxPriorityFeePerGas"'],
      [[{ to: ADDRESS, maxFeePerGas: '0x2' }, 'latest'], 'invalid argument 0 (call): "maxFeePerGas" requires "maxPriorityFeePerGas"'],
      [[{ to: ADDRESS, maxPriorityFeePerGas: '0x1' }, 'latest'], 'invalid argument 0 (call): "maxPriorityFeePerGas" requires "maxFeePerGas"'],
    ],
  }),
  eth_chainId: noParams,
  net_version: noParams,
  web3_clientVersion: noParams,
  eth_syncing: noParams,
  eth_blockNumber: noParams,
  eth_gasPrice: noParams,
  eth_maxPriorityFeePerGas: noParams,
  eth_feeHistory: {
    valid: [['0x4', 'latest', [25, 75]], [4, 'latest', [25, 75]], ['4', '0x10'], ['0x4', 'pending', []]],
    invalid: [
      [['0x4'], 'missing value for required argument 1 (newestBlock)'],
      [['four', 'latest'], 'invalid argument 0 (blockCount): must be a block count (a hex quantity or a decimal number)'],
      [[-1, 'latest'], 'invalid argument 0 (blockCount): must be >= 0'],
      [[1.5, 'latest'], 'invalid argument 0 (blockCount): must be string or integer'],
      [['0x4', 'latest', [101]], 'invalid argument 2 (rewardPercentiles): 0 must be <= 100'],
      [['0x4', 'latest', '25'], 'invalid argument 2 (rewardPercentiles): must be array or null'],
    ],
  },
  eth_estimateGas: merge(callExamples('eth_estimateGas'), {
    valid: [[{ to: ADDRESS }], [{ to: ADDRESS }, { blockNumber: '0x1' }], [{ data: '0x6080' }, 'latest', {}]],
    invalid: [[[{ to: ADDRESS }, 'head'], `invalid argument 1 (block): ${M.blockId}`]],
  }),
  eth_getBalance: merge(blockIdExamples([ADDRESS], 1, 'block'), {
    valid: [[ADDRESS]],
    invalid: [
      [[], 'missing value for required argument 0 (address)'],
      [[ADDRESS, 'latest', 'extra'], 'too many arguments, want at most 2'],
      [['0x12', 'latest'], `invalid argument 0 (address): ${M.address}`],
    ],
  }),
  eth_getCode: merge(blockIdExamples([ADDRESS], 1, 'block'), {
    valid: [[ADDRESS]],
    invalid: [[[], 'missing value for required argument 0 (address)']],
  }),
  eth_getStorageAt: merge(blockIdExamples([ADDRESS, '0x0'], 2, 'block'), {
    valid: [[ADDRESS, '0x0'], [ADDRESS, HASH, 'latest'], [ADDRESS, '0', 'latest'], [ADDRESS, '0x00', 'latest']],
    invalid: [
      [[ADDRESS], 'missing value for required argument 1 (slot)'],
      [[ADDRESS, `${HASH}00`, 'latest'], 'invalid argument 1 (slot): must be a storage slot (hex, at most 32 bytes)'],
      [[ADDRESS, 0, 'latest'], 'invalid argument 1 (slot): must be string'],
    ],
  }),
  eth_getTransactionCount: merge(blockIdExamples([ADDRESS], 1, 'block'), {
    valid: [[ADDRESS]],
    invalid: [[[`${ADDRESS.slice(0, 41)}`, 'pending'], `invalid argument 0 (address): ${M.address}`]],
  }),
  eth_getBlockByHash: {
    valid: [[HASH, false], [HASH, true]],
    invalid: [
      [[HASH], 'missing value for required argument 1 (fullTransactions)'],
      [['latest', false], `invalid argument 0 (blockHash): ${M.hash}`],
    ],
  },
  eth_getBlockTransactionCountByNumber: {
    valid: [['latest'], ['0x1']],
    invalid: [
      [[], 'missing value for required argument 0 (block)'],
      [['0xz'], `invalid argument 0 (block): ${M.blockTag}`],
    ],
  },
  eth_getBlockTransactionCountByHash: {
    valid: [[HASH]],
    invalid: [[['0x1'], `invalid argument 0 (blockHash): ${M.hash}`]],
  },
  eth_getTransactionByBlockHashAndIndex: {
    valid: [[HASH, '0x0']],
    invalid: [
      [[HASH], 'missing value for required argument 1 (index)'],
      [['latest', '0x0'], `invalid argument 0 (blockHash): ${M.hash}`],
    ],
  },
  eth_getUncleCountByBlockNumber: {
    valid: [['latest'], ['safe'], ['0x0']],
    invalid: [[['0xZ'], `invalid argument 0 (block): ${M.blockTag}`]],
  },
  eth_getUncleCountByBlockHash: {
    valid: [[HASH]],
    invalid: [[[], 'missing value for required argument 0 (blockHash)']],
  },
  eth_getBlockReceipts: merge(blockIdExamples([], 0, 'block'), {
    valid: [],
    invalid: [[[], 'missing value for required argument 0 (block)']],
  }),
  eth_subscribe: {
    valid: [['newHeads'], ['logs'], ['logs', {}], ['logs', { address: ADDRESS, topics: [TOPIC, null, [TOPIC, TOPIC]] }], ['logs', { address: [ADDRESS], topics: null }], ['newPendingTransactions'], ['newPendingTransactions', false]],
    invalid: [
      [[], 'missing value for required argument 0 (kind)'],
      [['syncing'], 'invalid argument 0 (kind): must be one of "newHeads", "logs", "newPendingTransactions"'],
      [['newHeads', {}], 'too many arguments, want at most 1'],
      [['logs', { fromBlock: '0x1' }], 'invalid argument 1 (filter): unknown field "fromBlock"'],
      [['logs', { blockHash: HASH }], 'invalid argument 1 (filter): unknown field "blockHash"'],
      [['logs', { address: '0x12' }], `invalid argument 1 (filter): address ${M.address}`],
      [['newPendingTransactions', true], 'invalid argument 1 (filter): must be false (only transaction hashes are offered)'],
      [['logs', {}, 1], 'too many arguments, want at most 2'],
    ],
  },
  eth_unsubscribe: {
    valid: [['0x1'], ['0x9cef478923ff08bf67fde6c64013158d']],
    invalid: [
      [[], 'missing value for required argument 0 (subscription)'],
      [[1], 'invalid argument 0 (subscription): must be string'],
      [['0x1', '0x2'], 'too many arguments, want at most 1'],
    ],
  },
  eth_getProof: merge(blockIdExamples([ADDRESS, ['0x0']], 2, 'block'), {
    valid: [[ADDRESS, []], [ADDRESS, [HASH, '0x1'], 'latest']],
    invalid: [
      [[ADDRESS], 'missing value for required argument 1 (storageKeys)'],
      [[ADDRESS, '0x0'], 'invalid argument 1 (storageKeys): must be array'],
      [[ADDRESS, [`${HASH}00`]], 'invalid argument 1 (storageKeys): 0 must be a storage slot (hex, at most 32 bytes)'],
      [['0x12', []], `invalid argument 0 (address): ${M.address}`],
    ],
  }),
  eth_getStorageValues: merge(blockIdExamples([{ [ADDRESS]: ['0x0'] }], 1, 'block'), {
    valid: [[{ [ADDRESS]: [HASH] }], [{}, 'latest']],
    invalid: [
      [[], 'missing value for required argument 0 (slots)'],
      [[{ '0x12': [HASH] }], `invalid argument 0 (slots): ${M.address}`],
      [[{ [ADDRESS]: HASH }], 'invalid argument 0 (slots): ' + ADDRESS + ' must be array'],
    ],
  }),
  eth_simulateV1: merge(blockIdExamples([{ blockStateCalls: [] }], 1, 'block'), {
    valid: [[{ blockStateCalls: [{ calls: [{ to: ADDRESS }] }], validation: true, traceTransfers: null }]],
    invalid: [
      [[{}], 'invalid argument 0 (payload): missing required field "blockStateCalls"'],
      [[{ blockStateCalls: {} }], 'invalid argument 0 (payload): blockStateCalls must be array'],
      [[{ blockStateCalls: [], validation: 'yes' }], 'invalid argument 0 (payload): validation must be boolean or null'],
    ],
  }),
  eth_fillTransaction: {
    valid: [[{ from: ADDRESS, to: ADDRESS, value: '0x1' }]],
    invalid: [
      [[], 'missing value for required argument 0 (transaction)'],
      [[{ to: '0x12' }], `invalid argument 0 (transaction): to ${M.address}`],
    ],
  },
  eth_baseFee: noParams,
  eth_blobBaseFee: noParams,
  eth_config: noParams,
  eth_capabilities: noParams,
  eth_getBlockAccessList: blockIdExamples([], 0, 'block'),
  eth_newFilter: {
    valid: [[{}], [{ fromBlock: '0x1', address: ADDRESS, topics: [TOPIC] }]],
    invalid: [
      [[], 'missing value for required argument 0 (filter)'],
      [[{ address: '0x12' }], `invalid argument 0 (filter): address ${M.address}`],
    ],
  },
  eth_newBlockFilter: noParams,
  eth_newPendingTransactionFilter: {
    valid: [[], [true], [null]],
    invalid: [[['yes'], 'invalid argument 0 (fullTransactions): must be boolean or null']],
  },
  ...Object.fromEntries(['eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter'].map((name) => [name, {
    valid: [['0x1'], ['0x9cef478923ff08bf67fde6c64013158d']],
    invalid: [
      [[], 'missing value for required argument 0 (filterId)'],
      [['abc'], 'invalid argument 0 (filterId): must be a filter id (0x followed by hex digits)'],
    ],
  }])),
  // Refused before their params are looked at (see the validate stage): any params pass the schema.
  eth_sign: { valid: [[ADDRESS, '0x00'], []], invalid: [] },
  eth_signTransaction: { valid: [[{ from: ADDRESS }]], invalid: [] },
  eth_sendTransaction: { valid: [[{ from: ADDRESS, to: ADDRESS }]], invalid: [] },
  eth_accounts: { valid: [[]], invalid: [] },
  eth_coinbase: { valid: [[]], invalid: [] },
  eth_signTypedData: { valid: [[ADDRESS, {}]], invalid: [] },
  eth_signTypedData_v3: { valid: [[ADDRESS, '{}']], invalid: [] },
  eth_signTypedData_v4: { valid: [[ADDRESS, '{}']], invalid: [] },
  eth_sendUnsignedTransaction: { valid: [[{ from: ADDRESS, to: ADDRESS }]], invalid: [] },
  eth_sendRawTransaction: {
    valid: [['0x02f86c0180843b9aca00'], ['0x']],
    invalid: [
      [[], 'missing value for required argument 0 (transaction)'],
      [['0x02f'], `invalid argument 0 (transaction): ${M.data}`],
      [['02f86c'], `invalid argument 0 (transaction): ${M.data}`],
    ],
  },
};

t.test('every method of the family has examples, and every example method is offered', async (t) => {
  t.same(Object.keys(examples).sort(), [...validators.keys()].sort());
});

for (const [method, { valid, invalid }] of Object.entries(examples)) {
  t.test(method, async (t) => {
    for (const params of valid) t.equal(validate(method, params), undefined, `accepts ${JSON.stringify(params)}`);
    for (const [params, message] of invalid) t.equal(validate(method, params), message, `refuses ${JSON.stringify(params)}`);
  });
}

t.test('the spec methods carry the spec credits and policies', async (t) => {
  const table = Object.fromEntries(family.methods.map((m) => [m.name, { credits: m.credits, failover: m.failover, idempotent: m.idempotent }]));
  t.same(table.eth_getLogs, { credits: 255, failover: false, idempotent: true });
  t.same(table.eth_getUncleByBlockNumberAndIndex, { credits: 150, failover: false, idempotent: true });
  t.same(table.eth_getUncleByBlockHashAndIndex, { credits: 150, failover: true, idempotent: true });
  t.same(table.eth_getTransactionByBlockNumberAndIndex, { credits: 150, failover: false, idempotent: true });
  for (const name of ['eth_getTransactionByHash', 'eth_call', 'eth_getBlockByNumber', 'eth_getTransactionReceipt', 'eth_createAccessList']) {
    t.same(table[name], { credits: 80, failover: false, idempotent: true }, name);
  }
  t.same(table.eth_sendRawTransaction, { credits: 720, failover: false, idempotent: false });
  for (const method of family.methods) {
    if (method.refused !== undefined) {
      t.match(method.refused, /\w+/, `${method.name} says why it is refused`);
      continue;
    }
    t.ok(Number.isInteger(method.credits) && method.credits > 0, `${method.name} has a positive credit cost`);
    const positions = (method.params as { prefixItems?: unknown[] }).prefixItems?.length ?? 0;
    t.equal(method.paramNames?.length, positions, `${method.name} names each parameter`);
    t.type(method.description, 'string', `${method.name} is described`);
  }
});

// --- The recorded execution-apis exchanges -------------------------------------------------------

const conformance = fileURLToPath(new URL('../../shared/conformance/', import.meta.url));
const fixtureRoot = join(conformance, 'execution-apis', 'tests');

interface Exchange {
  readonly file: string;
  readonly request: { method: string; params?: unknown };
  readonly response: { result?: unknown; error?: { code: number; message: string } };
}

function exchangesIn(dir: string): Exchange[] {
  const out: Exchange[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...exchangesIn(path));
    else if (name.endsWith('.io')) {
      let request: Exchange['request'] | undefined;
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (line.startsWith('>> ')) request = JSON.parse(line.slice(3)) as Exchange['request'];
        else if (line.startsWith('<< ') && request !== undefined) {
          out.push({ file: relative(fixtureRoot, path), request, response: JSON.parse(line.slice(3)) as Exchange['response'] });
          request = undefined;
        }
      }
    }
  }
  return out;
}

/**
 * Fixtures whose recorded answer is an error, and what the gateway's validator does with each:
 * `accepted` when the error depends on the chain (the node answers it), or the refusal message when
 * the request itself is invalid for the gateway.
 */
const errorFixtures: Record<string, { readonly validator: 'accepted' } | { readonly validator: 'refused'; readonly message: string }> = {
  // A revert is an execution outcome: the request is valid.
  'eth_call/call-revert-abi-error.io': { validator: 'accepted' },
  'eth_call/call-revert-abi-panic.io': { validator: 'accepted' },
  // The range is checked against the head block, which only the node knows.
  'eth_getLogs/filter-error-future-block-range.io': { validator: 'accepted' },
  // fromBlock > toBlock: a well-formed filter the node refuses ("invalid block range params"); it is
  // left to the node so that its exact answer reaches the client.
  'eth_getLogs/filter-error-reversed-block-range.io': { validator: 'accepted' },
  // blockHash with fromBlock/toBlock is refused by the schema with geth's own wording; only the
  // parameter name the core adds differs (geth: "invalid argument 0: cannot specify both ...").
  'eth_getLogs/filter-error-invalid-blockHash-and-range.io': {
    validator: 'refused',
    message: 'invalid argument 0 (filter): cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other',
  },
};

t.test('every recorded request of an offered method is accepted, except documented invalid ones', async (t) => {
  const exchanges = exchangesIn(fixtureRoot).filter((e) => validators.has(e.request.method));
  t.equal(exchanges.length, 26, 'found every recorded exchange of an offered method');
  const erroring = new Set<string>();
  for (const { file, request, response } of exchanges) {
    const problem = validate(request.method, request.params ?? []);
    if (response.error === undefined) {
      t.equal(problem, undefined, `${file}: accepted`);
      continue;
    }
    erroring.add(file);
    const expected = errorFixtures[file];
    if (expected === undefined) {
      t.fail(`${file}: recorded answer is an error (${response.error.message}) and has no documented case`);
    } else if (expected.validator === 'accepted') {
      t.equal(problem, undefined, `${file}: accepted, the node answers "${response.error.message}"`);
    } else {
      t.equal(response.error.code, -32602, `${file}: the node refused it as invalid params too`);
      t.equal(problem, expected.message, `${file}: refused by the validator`);
    }
  }
  t.same([...erroring].sort(), Object.keys(errorFixtures).sort(), 'every documented error fixture was seen');
});

// --- polygon -------------------------------------------------------------------------------------

t.test('polygon: bor_getCurrentValidators takes no parameters', async (t) => {
  const polygon = createPolygonFamily();
  t.equal(polygon.name, 'polygon');
  t.same(polygon.methods.map((m) => m.name), ['bor_getCurrentValidators']);
  const method = polygon.methods[0]!;
  t.same({ credits: method.credits, failover: method.failover, idempotent: method.idempotent }, { credits: 80, failover: true, idempotent: true });
  const check = compileParams(method);
  t.equal(check([]), undefined, 'accepts []');
  t.equal(check([1]), 'too many arguments, want at most 0');
  t.equal(check({}), 'params must be an array');
  // The recorded request of the bor fixture (a "-->" line).
  const recorded = readFileSync(join(conformance, 'bor', 'bor_getCurrentValidators.txt'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('--> '))
    .map((line) => JSON.parse(line.slice(4)) as { method: string; params?: unknown });
  t.equal(recorded.length, 1, 'found the recorded request');
  for (const request of recorded) t.equal(check(request.params ?? []), undefined, 'accepts the recorded request');
});
