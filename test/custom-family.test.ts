import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import type { MethodDefinition, NetworkFamily } from '../core/family-api.js';
import { type TollgatePlugin } from '../core/index.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { devnet } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';

// A network family written only against the public contract, as an integrator would: one method.
const sha3: MethodDefinition = {
  name: 'web3_sha3',
  credits: 7,
  paramNames: ['data'],
  params: { type: 'array', prefixItems: [{ type: 'string', pattern: '^0x([0-9a-fA-F]{2})*$', description: 'hex data' }], minItems: 1, items: false },
};
const demoFamily: NetworkFamily = { name: 'demo', methods: [sha3] };
const demoPlugin: TollgatePlugin = {
  name: 'demo-family',
  register(container) {
    container.register(Tokens.Family, { useValue: demoFamily });
  },
};

const KEY = 'custom-family-key-01';
const gw = await startTestGateway(
  { keys: [{ key: KEY, id: 'custom', plan: 'core' }], networks: [{ name: 'demo', families: ['demo'], upstreams: [{ embedded: 'anvil' }] }] },
  [httpTransport(), demoPlugin, devnet()],
);
t.teardown(() => gw.close());

t.test('a family registered through the public contract serves its method', async (t) => {
  const res = await post(gw.url('demo', KEY), rpc('web3_sha3', ['0x68656c6c6f20776f726c64']));
  t.equal(res.status, 200);
  t.same(res.json, { jsonrpc: '2.0', id: 1, result: '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad' });
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  t.equal((await ledger.balance('custom', 1e6, new Date())).used, 7, 'charged its own credit cost');
});

t.test('its schema is enforced and methods of other families are not offered', async (t) => {
  const bad = await post(gw.url('demo', KEY), rpc('web3_sha3', ['hello']));
  t.same((bad.json as { error: { code: number; message: string } }).error, { code: -32602, message: 'invalid argument 0 (data): must be hex data' });
  const other = await post(gw.url('demo', KEY), rpc('eth_chainId', []));
  t.equal((other.json as { error: { code: number } }).error.code, -32601);
});

t.test('plugins are checked when the gateway is assembled', async (t) => {
  await t.rejects(
    startTestGateway({ networks: [{ name: 'x', families: ['demo'], upstreams: [{ url: 'http://127.0.0.1:1' }] }] }, [demoPlugin, demoPlugin]),
    /plugin "demo-family" is registered twice/,
  );
  await t.rejects(
    startTestGateway({ networks: [{ name: 'x', families: ['nope'], upstreams: [{ url: 'http://127.0.0.1:1' }] }] }, [demoPlugin]),
    /networks\[0\]\.families\[0\]: no plugin provides network family "nope"/,
  );
  await t.rejects(
    startTestGateway({ networks: [{ name: 'x', families: ['demo'], upstreams: [{ url: 'http://127.0.0.1:1' }] }] }, [{ name: 'needy', dependsOn: ['http'], register() {} }]),
    /plugin "needy" needs plugin "http"/,
  );
});
