/**
 * The file-storage transport cancels as every transport does, by unsubscribing: a client that leaves
 * before its answer stops the call, the request to the node is aborted, and the call is recorded once,
 * as a failure.
 */
import t from 'tap';
import { request } from 'node:http';
import { Tokens } from '../core/plugin-api.js';
import { basic, IPFS_KEY, IPFS_SECRET, startIpfsGateway } from './helpers/ipfs-gateway.js';
import { startKuboStub } from './helpers/kubo-stub.js';
import { until } from './helpers/until.js';

const HELLO = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';

t.test('a client that leaves before the answer: the node\'s request is aborted, the call recorded once as failed', async (t) => {
  let received = 0;
  let aborted = 0;
  // A node that takes the request and never answers: only the gateway can end it.
  const stub = await startKuboStub((req, res) => {
    received++;
    req.resume();
    res.on('close', () => { if (!res.writableFinished) aborted++; });
  });
  const gw = await startIpfsGateway({ upstreams: [{ url: stub.url }] });
  t.teardown(async () => {
    await gw.close();
    await stub.close();
  });
  const usage = gw.gateway.container.resolve(Tokens.UsageRecorder);
  const req = request(`${gw.api}/cat?arg=${HELLO}`, { method: 'POST', headers: { authorization: basic(IPFS_KEY, IPFS_SECRET) } });
  req.on('error', () => {});
  req.end();
  await until('the node received the request', () => received === 1);
  req.destroy();
  await until('the node saw its request aborted', () => aborted === 1);
  const day = new Date().toISOString().slice(0, 10);
  const totals = async (): Promise<Record<string, unknown>> => (await usage.usage!('ipfs-test', day)) as Record<string, unknown>;
  await until('the call was recorded', async () => Object.keys(await totals()).length > 0);
  t.same(await totals(), { cat: { calls: 1, credits: 0, bytes: 0, failed: 1 } }, 'one call, failed, charged nothing');
});
