/**
 * Records the Solana RPC conformance data: for each of Solana's 52 HTTP methods, the calls of
 * test/helpers/solana-rpc-requests.ts sent to a fresh node of the recording scenario, and its exact
 * answers, written to test/fixtures/solana-rpc/<method>.io.
 *
 * Run: `node --conditions=tollgate-source --import tsx scripts/record-solana-rpc.ts`
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatSolanaRpcFixture, solanaRpcFixtureDir, type SolanaRpcExchange } from '../test/helpers/solana-rpc-fixtures.js';
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
      exchanges.push({ comment: call.comment, requestText, responseText: await response.text() });
    }
    writeFileSync(join(solanaRpcFixtureDir, `${method}.io`), formatSolanaRpcFixture({ method, exchanges }));
  } finally {
    await scenario.stop();
  }
}
console.log(`recorded ${methods.length} methods into ${solanaRpcFixtureDir}`);
