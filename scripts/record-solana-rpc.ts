/**
 * Records the Solana RPC conformance data: for each of Solana's 52 HTTP methods, the calls of
 * test/helpers/solana-rpc-requests.ts sent to a fresh node of the recording scenario, and its exact
 * answers, written to test/fixtures/solana-rpc/<method>.io; for each of the nine subscriptions, the
 * transcript of test/helpers/solana-pubsub-recording.ts's plan, in test/fixtures/solana-rpc/subscriptions/.
 *
 * Run: `node --conditions=tollgate-source --import tsx scripts/record-solana-rpc.ts`
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recordSubscription, solanaPubsubPlans } from '../test/helpers/solana-pubsub-recording.js';
import { formatSolanaRpcFixture, pubsubFixtureHeader, solanaPubsubFixtureDir, solanaRpcFixtureDir, withDefaultPorts, type SolanaRpcExchange } from '../test/helpers/solana-rpc-fixtures.js';
import { solanaRecordingCalls } from '../test/helpers/solana-rpc-requests.js';
import { startSolanaScenario } from '../test/helpers/solana-rpc-scenario.js';

mkdirSync(solanaRpcFixtureDir, { recursive: true });
const probe = await startSolanaScenario();
const methods = Object.keys(solanaRecordingCalls(probe)).sort();
await probe.stop();
for (const method of methods) {
  const scenario = await startSolanaScenario();
  try {
    const calls = solanaRecordingCalls(scenario)[method]!;
    const exchanges: SolanaRpcExchange[] = [];
    for (const [index, call] of calls.entries()) {
      const requestText = JSON.stringify({ jsonrpc: '2.0', id: index + 1, method, ...(call.params === undefined ? {} : { params: call.params }) });
      const response = await fetch(scenario.instance.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: requestText });
      exchanges.push({ comment: call.comment, requestText, responseText: withDefaultPorts(await response.text(), scenario.instance.url) });
    }
    writeFileSync(join(solanaRpcFixtureDir, `${method}.io`), formatSolanaRpcFixture({ method, exchanges }));
  } finally {
    await scenario.stop();
  }
}
mkdirSync(solanaPubsubFixtureDir, { recursive: true });
const kinds = Object.keys(solanaPubsubPlans(probe)).sort();
for (const method of kinds) {
  const scenario = await startSolanaScenario();
  try {
    const plan = solanaPubsubPlans(scenario)[method]!;
    const lines = await recordSubscription(scenario, scenario.instance.wsUrl, method, plan);
    writeFileSync(join(solanaPubsubFixtureDir, `${method}.io`), `${[...pubsubFixtureHeader(method, plan.comment), ...lines].join('\n')}\n`);
  } finally {
    await scenario.stop();
  }
}
console.log(`recorded ${methods.length} methods and ${kinds.length} subscriptions into ${solanaRpcFixtureDir}`);
