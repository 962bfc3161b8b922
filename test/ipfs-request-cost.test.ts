/**
 * What one file-storage request costs the stores, counted with wrappers around them: one key lookup,
 * at most one secret verification (none while a verified secret is remembered) and one usage record,
 * whether the answer is whole (`version`), streamed (`cat`, its bytes in that same record), refused or
 * left by its client mid-stream. An unknown key is looked up once and verified once (against the
 * decoy), and leaves no usage record: there is no key to record it under.
 */
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { request } from 'undici';
import { Tokens } from '../core/plugin-api.js';
import { verifySecret, type KeyStore, type UsageEvent, type UsageRecorder } from '../core/store-api.js';
import { type TollgatePlugin } from '../core/index.js';
import { IPFS_SECRET_CHECK } from '../plugins/ipfs/secret-check.js';
import { IPFS_KEY, IPFS_SECRET, basic, startIpfsGateway } from './helpers/ipfs-gateway.js';
import { CAT_HEADERS, startKuboStub } from './helpers/kubo-stub.js';
import { until } from './helpers/until.js';

const HELLO = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';
const VERSION = JSON.stringify({ Version: '0.29.0', Commit: '', Repo: '15', System: 'amd64/linux', Golang: 'go1.22.4' });

const counts = { lookups: 0, verifications: 0 };
const records: UsageEvent[] = [];
const counting: TollgatePlugin = {
  name: 'counting-stores',
  register(container) {
    const keys = container.resolve<KeyStore>(Tokens.KeyStore);
    container.register(Tokens.KeyStore, { useValue: { find: (key: string) => (counts.lookups++, keys.find(key)) } satisfies KeyStore });
    const usage = container.resolve<UsageRecorder>(Tokens.UsageRecorder);
    container.register(Tokens.UsageRecorder, { useValue: { record: (event) => { records.push(event); return usage.record(event); } } satisfies UsageRecorder });
    container.register(IPFS_SECRET_CHECK, { useValue: (secret: string, secretHash: string) => (counts.verifications++, verifySecret(secret, secretHash)) });
  },
};

// A node that answers version whole, cat streamed, and holds a cat of `held` until the client is gone.
let heldOpen = 0;
const stub = await startKuboStub((req, res) => {
  req.resume();
  if (req.url?.startsWith('/api/v0/version') === true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(VERSION);
    return;
  }
  res.writeHead(200, CAT_HEADERS);
  if (req.url?.includes('offset=7') === true) {
    // Streams a first chunk, then holds the rest until the client leaves.
    res.write('first chunk\n');
    heldOpen++;
    res.on('close', () => heldOpen--);
    return;
  }
  res.end('hello world\n');
});
// Several checks from one address within a second: the refusal budget is set out of its way.
const gw = await startIpfsGateway({ upstreams: [{ url: stub.url }], plugins: [counting], ipfs: { secretChecksPerSourcePerSecond: 1000, secretChecksPerSecond: 1000 } });
t.teardown(async () => {
  await gw.close();
  await stub.close();
});

/** What one request cost: lookups, verifications and the usage records it left (their `at` dropped). */
async function costOf(path: string, authorization: string): Promise<{ status: number; body: string; lookups: number; verifications: number; records: Array<Omit<UsageEvent, 'at'>> }> {
  const before = { ...counts, records: records.length };
  const res = await request(`${gw.api}/${path}`, { method: 'POST', headers: { authorization } });
  const body = await res.body.text();
  // A streamed answer's record is written when the relay ends, just after the client has its last byte.
  if (res.statusCode === 200 && path.startsWith('cat')) await until('the streamed call was recorded', () => records.length > before.records);
  return {
    status: res.statusCode,
    body,
    lookups: counts.lookups - before.lookups,
    verifications: counts.verifications - before.verifications,
    records: records.slice(before.records).map(({ at: _at, ...event }) => event),
  };
}

const record = (method: string, extra: Partial<UsageEvent>): Omit<UsageEvent, 'at'> => ({ keyId: 'ipfs-test', network: 'ipfs', method, calls: 1, credits: 0, bytes: 0, failed: false, cache: undefined, ...extra });

t.test('a streamed answer: one lookup, one verification, one usage record with its bytes', async (t) => {
  const first = await costOf(`cat?arg=${HELLO}`, gw.auth);
  t.equal(first.status, 200);
  t.equal(first.body, 'hello world\n');
  t.equal(first.lookups, 1, 'the key is looked up once');
  t.equal(first.verifications, 1, 'the secret is verified once');
  t.same(first.records, [record('cat', { bytes: 12 })], 'one usage record, with the bytes served');
  const again = await costOf(`cat?arg=${HELLO}`, gw.auth);
  t.equal(again.lookups, 1);
  t.equal(again.verifications, 0, 'a verified secret is remembered');
  t.same(again.records, [record('cat', { bytes: 12 })]);
});

t.test('a whole answer: one lookup, one usage record with its bytes', async (t) => {
  const version = await costOf('version', gw.auth);
  t.equal(version.status, 200);
  t.equal(version.lookups, 1);
  // version is charged its price (10 credits), taken when the call passed its checks.
  t.same(version.records, [record('version', { credits: 10, bytes: Buffer.byteLength(VERSION) })]);
});

t.test('a refused secret: one lookup, one verification, one usage record (failed)', async (t) => {
  const wrong = await costOf('version', basic(IPFS_KEY, 'wrong-secret-0001'));
  t.equal(wrong.status, 401);
  t.equal(wrong.lookups, 1);
  t.equal(wrong.verifications, 1);
  t.same(wrong.records, [record('version', { failed: true })]);
});

t.test('an unknown key: one lookup, one (decoy) verification, no usage record', async (t) => {
  const unknown = await costOf('version', basic('no-such-key-000000001', IPFS_SECRET));
  t.equal(unknown.status, 401);
  t.equal(unknown.lookups, 1);
  t.equal(unknown.verifications, 1);
  t.same(unknown.records, []);
});

t.test('a client that leaves mid-stream: one usage record, failed, with the bytes it got', async (t) => {
  const before = { ...counts, records: records.length };
  const req = httpRequest(`${gw.api}/cat?arg=${HELLO}&offset=7`, { method: 'POST', headers: { authorization: gw.auth } });
  req.on('error', () => {});
  const got = await new Promise<string>((resolve) => {
    req.on('response', (res) => res.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8'))));
    req.end();
  });
  t.equal(got, 'first chunk\n');
  req.destroy();
  await until('the node saw the client leave', () => heldOpen === 0);
  await until('the call was recorded', () => records.length > before.records);
  t.equal(counts.lookups - before.lookups, 1);
  t.same(records.slice(before.records).map(({ at: _at, ...event }) => event), [record('cat', { bytes: 12, failed: true })]);
});
