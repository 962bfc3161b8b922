import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { recordSubscription, solanaPubsubPlans } from './helpers/solana-pubsub-recording.js';
import { solanaPubsubFixtureDir, solanaRpcFixtures, withDefaultPorts } from './helpers/solana-rpc-fixtures.js';
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

t.test('the nine subscriptions: recorded transcripts in agave\'s wire format, reproduced by a fresh node', async (t) => {
  const files = readdirSync(solanaPubsubFixtureDir).filter((f) => f.endsWith('.io')).sort();
  t.same(files.map((f) => f.replace(/\.io$/, '')), ['accountSubscribe', 'blockSubscribe', 'logsSubscribe', 'programSubscribe', 'rootSubscribe', 'signatureSubscribe', 'slotSubscribe', 'slotsUpdatesSubscribe', 'voteSubscribe']);
  for (const file of files) {
    const method = file.replace(/\.io$/, '');
    const recorded = readFileSync(join(solanaPubsubFixtureDir, file), 'utf8').split('\n').filter((l) => l.startsWith('>> ') || l.startsWith('<< ') || l.startsWith('// do: '));
    const notifications = recorded.filter((l) => l.startsWith('<< {"jsonrpc":"2.0","method"'));
    t.ok(notifications.length > 0, `${method}: notifications recorded`);
    for (const line of notifications) {
      t.match(line, new RegExp(`^<< \\{"jsonrpc":"2\\.0","method":"${method.replace('Subscribe', 'Notification')}","params":\\{"result":.*,"subscription":0\\}\\}$`), `${method}: agave's notification envelope`);
    }
    const scenario = await startSolanaScenario();
    try {
      const plan = solanaPubsubPlans(scenario)[method]!;
      t.same(await recordSubscription(scenario, scenario.instance.wsUrl, method, plan), recorded, `${method}: the same transcript`);
    } finally {
      await scenario.stop();
    }
  }
});
