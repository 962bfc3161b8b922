import t from 'tap';
import { Agent, request } from 'node:http';
import { startAnvil } from '@tollgate/devnet';
import type { GatewayConfigInput } from '../core/index.js';
import { socketOwner } from './helpers/socket-owner.js';
import { until } from './helpers/until.js';
import { cleanUpWorkersGateway, runTollgate, startWorkersGateway } from './helpers/workers-cli.js';

// A gateway of several processes under tsx, a node and CLI commands: slow on a loaded machine.
t.setTimeout(420_000);

const KEY = 'shared-store-key-0001';
const ADMIN_TOKEN = 'workers-admin-token-0123456789';
/** eth_chainId costs 5 credits: the plan allows exactly 50 of them a day. */
const CALLS_ALLOWED = 50;
const CALLS_SENT = 200;

interface Answer { status: number; text: string; localPort: number; setCookie: string | undefined }

function send(origin: string, agent: Agent, path: string, options: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, { method: options.method ?? 'GET', agent, headers: options.headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text, localPort: req.socket!.localPort!, setCookie: res.headers['set-cookie']?.[0] }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const rpc = (key: string): { method: string; body: string; headers: Record<string, string> } => ({
  method: 'POST',
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  headers: { 'content-type': 'application/json' },
});

t.test('two workers on one SQLite file: exact credits, and the admin API, dashboard, usage and keys agree whichever worker answers', async (t) => {
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const config: GatewayConfigInput = {
    server: { host: '127.0.0.1', port: 0 },
    log: { level: 'warn' },
    plans: { tiny: { dailyCredits: CALLS_ALLOWED * 5, creditsPerSecond: 1_000_000, failover: false } },
    keys: [{ key: KEY, id: 'shared', plan: 'tiny' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'anvil', url: anvil.url }] }],
  };
  const gateway = await startWorkersGateway(config, ['--workers', '2'], 90_000, { TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN });
  t.teardown(() => cleanUpWorkersGateway(gateway));
  const workers = gateway.workerPids();
  t.equal(workers.length, 2);

  // Sixteen keep-alive connections; round robin spreads them over both workers.
  const agents = Array.from({ length: 16 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  t.teardown(() => agents.forEach((a) => a.destroy()));
  const owners = new Map<Agent, number | undefined>();
  let sent = 0;
  let answered = 0;
  let refused = 0;
  const other: string[] = [];
  const servedBy = new Map<number | undefined, number>();
  await Promise.all(agents.map(async (agent) => {
    while (sent < CALLS_SENT) {
      sent++;
      const answer = await send(gateway.origin, agent, `/eth/v3/${KEY}`, rpc(KEY));
      if (!owners.has(agent)) owners.set(agent, socketOwner(gateway.port, answer.localPort, workers));
      const body = JSON.parse(answer.text) as { result?: string; error?: { code: number } };
      if (answer.status === 200 && body.result === '0x7a69') {
        answered++;
        servedBy.set(owners.get(agent), (servedBy.get(owners.get(agent)) ?? 0) + 1);
      } else if (answer.status === 402 && body.error?.code === -33000) refused++;
      else other.push(answer.text);
    }
  }));
  t.ok(workers.every((pid) => [...owners.values()].includes(pid)), 'both workers took connections');
  t.ok(workers.every((pid) => (servedBy.get(pid) ?? 0) > 0), `both workers answered calls (${[...servedBy.entries()].map(([pid, n]) => `${pid}: ${n}`).join(', ')})`);
  t.same(other, [], 'every call was answered or refused for credits');
  t.equal(answered, CALLS_ALLOWED, 'exactly the balance was sold, across both processes');
  t.equal(refused, CALLS_SENT - CALLS_ALLOWED);

  // tollgate usage reads the same file: charged = answered.
  type Usage = { days: Array<{ balanceUsed: number; total: { calls: number; credits: number; failed: number } }> };
  let usage: Usage | undefined;
  await until('usage is written', async () => {
    usage = JSON.parse((await runTollgate(gateway, ['usage', 'shared', '--json'])).stdout) as Usage;
    return usage.days[0]!.total.credits >= CALLS_ALLOWED * 5;
  }, 60_000, 500);
  const today = usage!.days[0]!;
  t.equal(today.balanceUsed, CALLS_ALLOWED * 5, 'the balance used is what the answered calls cost');
  t.equal(today.total.credits, CALLS_ALLOWED * 5, 'usage credits = answered calls × 5');
  t.equal(today.total.calls - today.total.failed, CALLS_ALLOWED, `usage counts the answered calls (${JSON.stringify(today.total)})`);

  // The admin API answers the same on either worker: usage from the store, traffic gathered from every worker.
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const byWorker = new Map<number, Agent>();
  for (const [agent, owner] of owners) if (owner !== undefined && !byWorker.has(owner)) byWorker.set(owner, agent);
  const usageBodies = await Promise.all([...byWorker.values()].map(async (agent) => JSON.parse((await send(gateway.origin, agent, '/admin/v1/keys/shared/usage', { headers: auth })).text) as unknown));
  t.equal(usageBodies.length, 2);
  t.same(usageBodies[0], usageBodies[1], 'the same usage from both workers');
  const traffic = await Promise.all([...byWorker.values()].map(async (agent) => JSON.parse((await send(gateway.origin, agent, '/admin/v1/keys/shared/traffic', { headers: auth })).text) as { networks: Record<string, { calls: number }>; outcomes: Record<string, number> }));
  for (const [i, body] of traffic.entries()) {
    t.same(body.outcomes, { 200: CALLS_ALLOWED, '402 CREDITS_EXHAUSTED': CALLS_SENT - CALLS_ALLOWED }, `worker ${i + 1}'s answer counts the whole group's calls`);
  }

  // A dashboard sign-in on one worker holds on the other.
  const [first, second] = [...byWorker.values()];
  const signIn = await send(gateway.origin, first!, '/admin/session', { method: 'POST', body: `token=${ADMIN_TOKEN}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(signIn.status, 303);
  const cookie = signIn.setCookie!.split(';')[0]!;
  for (const agent of [first!, second!]) {
    const session = await send(gateway.origin, agent, '/admin/session', { headers: { cookie } });
    t.same(JSON.parse(session.text), { signedIn: true }, 'signed in on this worker');
  }

  // A key created with the CLI while the group runs is served by every worker, and refused by all once revoked.
  const created = await runTollgate(gateway, ['keys', 'create', '--plan', 'growth', '--id', 'fresh', '--json']);
  t.equal(created.code, 0, created.stderr);
  const fresh = (JSON.parse(created.stdout) as { apiKey: string }).apiKey;
  for (const agent of [first!, second!]) {
    const answer = await send(gateway.origin, agent, `/eth/v3/${fresh}`, rpc(fresh));
    t.equal(answer.status, 200, `the new key is served (${answer.text})`);
  }
  t.equal((await runTollgate(gateway, ['keys', 'revoke', 'fresh'])).code, 0);
  await until('both workers refuse the revoked key', async () => {
    const answers = await Promise.all([first!, second!].map((agent) => send(gateway.origin, agent, `/eth/v3/${fresh}`, rpc(fresh))));
    return answers.every((a) => a.status === 401 || a.status === 403);
  }, 60_000, 250);

  gateway.child.kill('SIGTERM');
  t.equal(await gateway.exited, 0);
});
