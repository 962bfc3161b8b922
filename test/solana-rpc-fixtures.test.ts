import t from 'tap';
import { solanaRpcFixtures, withDefaultPorts } from './helpers/solana-rpc-fixtures.js';
import { SOLANA_ERROR_CODES, SOLANA_RESULT_SHAPES, shapeProblems } from './helpers/solana-rpc-shapes.js';
import { startSolanaScenario } from './helpers/solana-rpc-scenario.js';

// The recorded Solana RPC conformance data: one file per HTTP method, every answer in the shape the
// RPC documentation gives, and a fresh node of the recording scenario answering each request byte
// for byte as recorded (its own port written as agave's default), so the data is current and
// replayable through the gateway.
const METHODS = [
  'getAccountInfo', 'getBalance', 'getBlock', 'getBlockCommitment', 'getBlockHeight', 'getBlockProduction', 'getBlocks', 'getBlocksWithLimit',
  'getBlockTime', 'getClusterNodes', 'getEpochInfo', 'getEpochSchedule', 'getFeeForMessage', 'getFirstAvailableBlock', 'getGenesisHash',
  'getHealth', 'getHighestSnapshotSlot', 'getIdentity', 'getInflationGovernor', 'getInflationRate', 'getInflationReward', 'getLargestAccounts',
  'getLatestBlockhash', 'getLeaderSchedule', 'getMaxRetransmitSlot', 'getMaxShredInsertSlot', 'getMinimumBalanceForRentExemption',
  'getMultipleAccounts', 'getProgramAccounts', 'getRecentPerformanceSamples', 'getRecentPrioritizationFees', 'getSignaturesForAddress',
  'getSignatureStatuses', 'getSlot', 'getSlotLeader', 'getSlotLeaders', 'getStakeMinimumDelegation', 'getSupply', 'getTokenAccountBalance',
  'getTokenAccountsByDelegate', 'getTokenAccountsByOwner', 'getTokenLargestAccounts', 'getTokenSupply', 'getTransaction', 'getTransactionCount',
  'getVersion', 'getVoteAccounts', 'isBlockhashValid', 'minimumLedgerSlot', 'requestAirdrop', 'sendTransaction', 'simulateTransaction',
];
const fixtures = solanaRpcFixtures();

t.test('one recording per method of the issue\'s list, each with a success', async (t) => {
  t.equal(METHODS.length, 52);
  t.same(fixtures.map((f) => f.method), [...METHODS].sort());
  for (const fixture of fixtures) {
    t.ok(fixture.exchanges.some((e) => 'result' in (JSON.parse(e.responseText) as object)), `${fixture.method} has a successful answer`);
  }
});

t.test('every answer has the documented shape', async (t) => {
  for (const { method, exchanges } of fixtures) {
    for (const e of exchanges) {
      const answer = JSON.parse(e.responseText) as { jsonrpc: string; id: unknown; result?: unknown; error?: { code: number; message: string } };
      t.equal(answer.jsonrpc, '2.0');
      t.equal(answer.id, (JSON.parse(e.requestText) as { id: unknown }).id, `${method}: the request's id`);
      if (answer.error !== undefined) {
        t.ok(SOLANA_ERROR_CODES.has(answer.error.code), `${method} (${e.comment}): a documented code, ${answer.error.code}`);
        t.type(answer.error.message, 'string');
        continue;
      }
      t.same(shapeProblems(answer.result, SOLANA_RESULT_SHAPES[method]!), [], `${method} (${e.comment})`);
    }
  }
});

t.test('a fresh scenario node answers every recorded request byte for byte', async (t) => {
  for (const { method, exchanges } of fixtures) {
    const scenario = await startSolanaScenario();
    try {
      for (const e of exchanges) {
        const response = await fetch(scenario.instance.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: e.requestText });
        t.equal(withDefaultPorts(await response.text(), scenario.instance.url), e.responseText, `${method} (${e.comment})`);
      }
    } finally {
      await scenario.stop();
    }
  }
});
