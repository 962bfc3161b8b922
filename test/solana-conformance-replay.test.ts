import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { solanaFamily } from '../plugins/solana/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { solanaRpcFixtures } from './helpers/solana-rpc-fixtures.js';
import { startSolanaScenario } from './helpers/solana-rpc-scenario.js';

// The recorded Solana RPC exchanges (test/fixtures/solana-rpc/), replayed through the gateway in front of
// a fresh node of the recording scenario: every answer is the node's, byte for byte, unless the gateway
// refuses the call itself before the node is asked (those are listed, with the gateway's documented error).
const KEY = 'solana-replay-key-0001';

/**
 * Where the gateway answers on purpose otherwise than the node, by method and request id: the params it
 * refuses itself before the node is asked (agave's own limits, in the gateway's documented words), and a
 * resent transaction, answered with its signature instead of the node's "already processed".
 */
const GATEWAY_ANSWERS: Readonly<Record<string, RegExp>> = {
  'getAccountInfo#7': /^\{"jsonrpc":"2.0","id":7,"error":\{"code":-32602,"message":"invalid argument 0 \(address\): must be a base-58 encoded 32-byte public key/,
  'getBlock#6': /^\{"jsonrpc":"2.0","id":6,"error":\{"code":-32602,"message":"invalid argument 1 \(config\): commitment must be one of/,
  'getBlocks#2': /^\{"jsonrpc":"2.0","id":2,"error":\{"code":-32602,"message":"invalid argument 1 \(endSlot\): Slot range too large; max 500000"/,
  'getSignaturesForAddress#3': /^\{"jsonrpc":"2.0","id":3,"error":\{"code":-32602,"message":"invalid argument 1 \(config\): limit must be <= 1000"/,
  'sendTransaction#2': /^\{"jsonrpc":"2.0","id":2,"result":"[1-9A-HJ-NP-Za-km-z]{64,88}"\}$/,
};

/** Methods with an effect: asked once, through the gateway only. */
const WRITES = new Set(['sendTransaction', 'requestAirdrop']);

/** The node's own answer to `requestText`, asked directly. */
async function direct(url: string, requestText: string): Promise<string> {
  return (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: requestText })).text();
}

const fixtures = solanaRpcFixtures();
t.ok(fixtures.length >= 52, `${fixtures.length} methods recorded`);

for (const fixture of fixtures) {
  t.test(fixture.method, async (t) => {
    const scenario = await startSolanaScenario();
    t.teardown(() => scenario.stop());
    const gw = await startTestGateway(
      {
        plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
        keys: [{ key: KEY, plan: 'big' }],
        networks: [{ name: 'sol', families: ['solana'], upstreams: [{ url: scenario.instance.url }], options: { solana: { airdrop: true } } }],
      },
      [httpTransport(), solanaFamily()],
    );
    t.teardown(() => gw.close());
    for (const exchange of fixture.exchanges) {
      const response = await fetch(gw.url('sol', KEY), { method: 'POST', headers: { 'content-type': 'application/json' }, body: exchange.requestText });
      const text = await response.text();
      const own = GATEWAY_ANSWERS[`${fixture.method}#${(JSON.parse(exchange.requestText) as { id: number }).id}`];
      if (own !== undefined) {
        t.match(text, own, `${exchange.comment}: the gateway's documented answer`);
      } else if (text === exchange.responseText || WRITES.has(fixture.method)) {
        t.equal(text, exchange.responseText, exchange.comment);
      } else {
        // The fresh node itself answers otherwise than the recording (its RPC port, the order of equal
        // balances): the gateway's answer must still be the node's, byte for byte.
        t.equal(text, await direct(scenario.instance.url, exchange.requestText), `${exchange.comment} (the node's answer today)`);
      }
    }
  });
}
