/**
 * A call runs only the stages that apply to its network and transport: with every bundled plugin that
 * contributes stages loaded (file storage, WebSocket subscriptions, response cache, security), an
 * `eth_call` over HTTP passes the core's seven stages and the cache's two, and none of the file-storage
 * or subscription stages; over WebSocket it also passes the subscription stages; a file-storage call
 * passes the file-storage stages and none of the cache's. The stages are counted where they run: a
 * plugin registered last wraps every plugin stage's step so each run is recorded.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAnvil } from '@tollgate/devnet';
import { devnet } from '@tollgate/devnet';
import { CORE_STAGES, Tokens, step, type StageDefinition } from '../core/plugin-api.js';
import { type TollgatePlugin } from '../core/index.js';
import { stepFunctionOf } from '../core/pipeline/stage-runner.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ipfs } from '../plugins/ipfs/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { security } from '../plugins/security/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { openWs } from './helpers/ws-client.js';
import { basic } from './helpers/ipfs-gateway.js';

const KEY = 'stage-families-key-01';
const SECRET = 'stage-families-secret-01';

/** The plugin stages each call ran, by call method. */
const ran = new Map<string, string[]>();
const counting: TollgatePlugin = {
  name: 'count-stages',
  register(container) {
    for (const definition of container.resolveAll<StageDefinition>(Tokens.Stage)) {
      const create = definition.create.bind(definition);
      // The definitions are the plugins' own objects: wrap the step each one builds, keep everything else.
      Object.defineProperty(definition, 'create', {
        value: (deps: Parameters<StageDefinition['create']>[0]) => {
          const fn = stepFunctionOf(create(deps));
          if (fn === undefined) throw new Error(`bundled stage ${definition.name} is not a step`);
          return step((ctx) => {
            const key = `${ctx.transport}:${ctx.call.method}`;
            ran.set(key, [...(ran.get(key) ?? []), definition.name]);
            return fn(ctx);
          });
        },
      });
    }
  },
};

const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-stage-families-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const gw = await startTestGateway(
  {
    keys: [{ key: KEY, secret: SECRET, id: 'families', plan: 'growth' }],
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] },
      { name: 'ipfs', families: ['ipfs'], upstreams: [{ name: 'helia', embedded: 'helia' }] },
    ],
  },
  [httpTransport(), wsTransport(), evmFamily(), responseCache(), security(), ipfs(), devnet({ helia: { dataDir } }), counting],
);
t.teardown(() => gw.close());

const ethCall = { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: '0x0000000000000000000000000000000000000001', data: '0x' }, 'latest'] };

t.test('an eth_call over HTTP passes the core stages, the cache\'s and security\'s, and no file-storage or subscription stage', async (t) => {
  const res = await fetch(gw.url('eth', KEY), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ethCall) });
  t.equal(res.status, 200);
  t.match(await res.json(), { jsonrpc: '2.0', id: 1, result: '0x' });
  t.same(ran.get('http:eth_call'), ['cache', 'evm.resendCharge', 'security', 'cacheStore'], 'the plugin stages it ran, in pipeline order');
  t.equal(CORE_STAGES.length + ran.get('http:eth_call')!.length, 11, 'eleven stages in all, of the 19 the gateway has');
});

t.test('over WebSocket the same call also passes the two subscription stages', async (t) => {
  const ws = await openWs(`${gw.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`);
  t.teardown(() => ws.close());
  ws.send({ ...ethCall, id: 2 });
  t.match(await ws.waitFor(1), [{ jsonrpc: '2.0', id: 2, result: '0x' }]);
  t.same(ran.get('ws:eth_call'), ['cache', 'subscriptionCredits', 'evm.resendCharge', 'security', 'subscriptions', 'cacheStore']);
});

t.test('a file-storage call passes the file-storage stages and none of the cache\'s or subscriptions\'', async (t) => {
  const res = await fetch(`${gw.origin}/ipfs/api/v0/version`, { method: 'POST', headers: { authorization: basic(KEY, SECRET) } });
  t.equal(res.status, 200);
  t.same(ran.get('ipfs:version'), ['ipfsUnknownKey', 'ipfsCredentials', 'ipfsPlanAccess', 'security', 'ipfsRequestRate', 'ipfsObjectGetRoute', 'ipfsPins', 'ipfsAddQuota', 'ipfsObjectGetFallback', 'ipfsAddPins']);
});
