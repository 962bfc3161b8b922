import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite, openSqliteStore } from '../plugins/ledger-sqlite/index.js';
import { ManualClock, startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.js';

const COST = 80; // eth_blockNumber
const dir = await mkdtemp(join(tmpdir(), 'tollgate-sqlite-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());

t.test('debits are exact, refunds idempotent, and every balance survives reopening the file', async (t) => {
  const path = join(dir, 'reopen.db');
  const now = new Date(Date.UTC(2026, 4, 1, 12));
  const store = openSqliteStore({ path });
  const results = await Promise.all(Array.from({ length: 10 }, () => store.ledger.debit('k', 80, 300, now)));
  t.equal(results.filter((r) => r.ok).length, 3, 'three of ten concurrent debits fit a balance of 300');
  const refused = results.find((r) => !r.ok);
  t.same(refused && !refused.ok && { remaining: refused.remaining, resetsAt: refused.resetsAt.toISOString() }, { remaining: 60, resetsAt: '2026-05-02T00:00:00.000Z' });
  const taken = results.find((r) => r.ok)!;
  if (taken.ok) {
    await store.ledger.refund(taken.receipt);
    await store.ledger.refund(taken.receipt);
  }
  t.equal(store.ledger.balance('k', 300, now).used, 160, 'a refund gives back once, however often it is asked for');
  if (taken.ok) await store.ledger.refund({ ...taken.receipt });
  t.equal(store.ledger.balance('k', 300, now).used, 160, 'even from another copy of the receipt (the debit id decides), after a restart too');
  t.equal((await store.ledger.debit('k', 500, 300, now)).ok, false, 'a debit larger than the whole balance never fits');
  store.usage.record({ keyId: 'k', network: 'eth', method: 'eth_call', at: now.getTime(), calls: 1, credits: 80, bytes: 5, failed: false });
  store.close();

  const again = openSqliteStore({ path });
  t.teardown(() => again.close());
  t.equal(again.ledger.balance('k', 300, now).used, 160, 'the balance is read back from the file');
  t.same(again.usage.usage('k', '2026-05-01'), { eth_call: { calls: 1, credits: 80, bytes: 5, failed: 0 } }, 'usage committed before closing');
});

t.test('debits of one turn are decided together per key, in order, after a refund asked before them, and exact between two stores on one file', async (t) => {
  const path = join(dir, 'batched.db');
  const now = new Date(Date.UTC(2026, 4, 1, 12));
  const store = openSqliteStore({ path });
  const first = await store.ledger.debit('a', 100, 300, now);
  t.ok(first.ok);
  // One turn: a debit for each key, a refund of 'a', then two more debits of 'a' that fit only after it.
  const asked = [store.ledger.debit('a', 100, 300, now), store.ledger.debit('b', 50, 60, now)];
  const refunded = first.ok ? store.ledger.refund(first.receipt) : undefined;
  asked.push(store.ledger.debit('a', 100, 300, now), store.ledger.debit('a', 100, 300, now), store.ledger.debit('b', 50, 60, now));
  await refunded;
  const results = await Promise.all(asked);
  t.same(results.map((r) => r.ok), [true, true, true, true, false], 'the refund counts for the debits asked after it; b\'s second debit does not fit');
  t.same(results.map((r) => r.remaining), [100, 10, 100, 0, 10]);
  t.equal(store.ledger.balance('a', 300, now).used, 300);
  t.equal(store.ledger.balance('b', 60, now).used, 50);

  // Two stores on one file (two gateway processes): their batches serialise on the write lock.
  const other = openSqliteStore({ path });
  const both = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : other).ledger.debit('c', 10, 95, now)));
  t.equal(both.filter((r) => r.ok).length, 9, 'nine debits of 10 fit 95, whichever store took them');
  t.equal(other.ledger.balance('c', 95, now).used, 90);
  other.close();
  store.close();
});

t.test('the day rolls over at 00:00 UTC by the injected clock, and old days are pruned', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 23, 59, 59, 500));
  const sqlite = ledgerSqlite({ path: join(dir, 'day.db'), retainDays: 2 });
  const gw = await startTestGateway(
    {
      plans: { tiny: { dailyCredits: 2 * COST, creditsPerSecond: 1e6, failover: false } },
      keys: [{ key: 'sqlite-day-key-0001', id: 'day', plan: 'tiny' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    [sqlite, httpTransport(), evmFamily()],
    { clock },
  );
  t.teardown(() => gw.close());
  const url = gw.url('eth', 'sqlite-day-key-0001');
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200);
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200);
  const refused = await post(url, rpc('eth_blockNumber', []));
  t.equal(refused.status, 402, 'the balance is spent for 2026-11-22');
  t.equal((refused.json as { error: { data: { resetsAt: string } } }).error.data.resetsAt, '2026-11-23T00:00:00.000Z');
  clock.advance(500);
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200, 'at 00:00 UTC the new day has its whole balance');
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  t.equal((await ledger.balance('day', 2 * COST, new Date(clock.now()))).used, COST);
  t.equal((await ledger.balance('day', 2 * COST, new Date(clock.now() - 1000))).used, 2 * COST, 'the previous day keeps its total');
  t.same(Object.keys(sqlite.store.usage.usage('day', '2026-11-22')), ['eth_blockNumber'], 'usage is kept per day');

  clock.advance(3 * 86_400_000);
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200);
  t.equal((await ledger.balance('day', 2 * COST, new Date(Date.UTC(2026, 10, 22, 12)))).used, 0, 'days older than retainDays are deleted on rollover');
  t.same(sqlite.store.usage.usage('day', '2026-11-22'), {});
});

t.test('kill -9 in the middle of a load loses no answered call', async (t) => {
  const path = join(dir, 'durable.db');
  const spec = {
    store: 'sqlite' as const,
    config: {
      plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e12, failover: false } },
      keys: [{ key: 'sqlite-durable-key-01', id: 'durable', plan: 'big' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
      plugins: { 'ledger-sqlite': { path } },
    },
  };
  let gateway: GatewayProcess = await startGatewayProcess(spec);
  t.teardown(() => gateway.kill());
  const agent = new Agent({ connections: 16 });
  t.teardown(() => agent.close());

  const WORKERS = 12;
  let answered = 0;
  let sent = 0;
  let stop = false;
  const body = JSON.stringify(rpc('eth_blockNumber', []));
  const url = `${gateway.origin}/eth/v3/sqlite-durable-key-01`;
  const worker = async (): Promise<void> => {
    while (!stop) {
      sent++;
      try {
        const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
        const text = await res.body.text();
        if (res.statusCode === 200 && text.includes('"result"')) answered++;
      } catch {
        return; // the gateway is gone
      }
    }
  };
  const load = Promise.all(Array.from({ length: WORKERS }, worker));
  while (answered < 300) await new Promise((resolve) => setTimeout(resolve, 5));
  await gateway.kill();
  stop = true;
  await load;
  t.ok(answered >= 300, `${answered} calls answered before the kill, ${sent} sent`);

  const store = openSqliteStore({ path });
  t.teardown(() => store.close());
  const used = store.ledger.balance('durable', 1e12, new Date()).used;
  t.ok(used >= answered * COST, `every answered call is in the ledger (${used / COST} debits, ${answered} answered)`);
  t.ok(used <= (answered + WORKERS) * COST, 'and at most the calls in flight at the kill are charged on top');

  gateway = await startGatewayProcess(spec);
  const res = await post(`${gateway.origin}/eth/v3/sqlite-durable-key-01`, rpc('eth_blockNumber', []));
  t.equal(res.status, 200, 'the restarted gateway serves');
  t.equal(store.ledger.balance('durable', 1e12, new Date()).used, used + COST, 'and goes on from the balance it found');
  t.equal(await gateway.stop(), 0, 'and stops cleanly');
});
