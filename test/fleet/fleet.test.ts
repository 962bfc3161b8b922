/**
 * The fleet test: gateway instances on hosts of their own (network namespaces where the test may create
 * them, loopback addresses otherwise), each running `tollgate start`, behind HAProxy, sharing Redis and
 * one Anvil node. Under HTTP and WebSocket load through HAProxy, one fault at a time: a Redis master
 * killed, a worker killed (with workers), a whole instance killed, a master stalled past the command
 * timeout. After each, a table row, and for each key: credits charged = results delivered (plus at most
 * the calls lost in flight with a dead instance: the crash window), usage = calls answered (within the
 * same window), no key spent beyond its balance, every client-visible error of a documented kind.
 *
 * Parameters (environment): TOLLGATE_FLEET_WORKERS (workers per instance, default 2; 1 runs no worker fault),
 * TOLLGATE_FLEET_STORE (`cluster`: three masters and three replicas, `tollgate start --redis-cluster`, the
 * default; `single`: one Redis primary), TOLLGATE_FLEET_HOSTS (`auto`, `netns` or `loopback`),
 * TOLLGATE_FLEET_FAULTS (only the faults whose names contain one of these comma-separated words).
 */
import t, { type Test } from 'tap';
import { haproxyAvailable } from '../helpers/haproxy.js';
import { redisAvailable } from '../helpers/redis-server.js';
import { steady, until } from '../helpers/until.js';
import { childProcesses } from '../helpers/processes.js';
import { documentedErrorKinds } from './documented-errors.js';
import type { Host } from '../helpers/host-network.js';
import { startFleet, type Fleet, type FleetInstance } from './fleet.js';
import { startFleetLoad, type FleetLoad } from './fleet-load.js';
import { startRedisCluster, startSingleRedis } from './fleet-store.js';

// Three instances of two workers start from the TypeScript sources (and one again after its kill) and four
// faults run under load, on CI's two cores beside other test files: about 4 minutes on a heavily loaded
// machine, within this, and well beyond the suite's default per-file timeout.
t.setTimeout(600_000);

for (const [tool, available] of [['redis-server', await redisAvailable()], ['haproxy', await haproxyAvailable()]] as const) {
  if (!available) {
    t.fail(`${tool} is not installed (apt-get install ${tool}); the fleet test needs it`);
    process.exit(1);
  }
}

const INSTANCES = 3;
const WORKERS = Number(process.env.TOLLGATE_FLEET_WORKERS ?? 2);
const STORE = process.env.TOLLGATE_FLEET_STORE ?? 'cluster';
if (STORE !== 'single' && STORE !== 'cluster') throw new Error(`TOLLGATE_FLEET_STORE must be single or cluster, not ${STORE}`);
const METHOD = 'eth_blockNumber';
const COST = 80; // credits of eth_blockNumber
const COMMAND_TIMEOUT_MS = 200;
const USAGE_FLUSH_MS = 20;
const SMALL_BALANCE_CALLS = 150;
const HTTP_LOOPS = 6;
const WS_CONNECTIONS = 3;
const WS_IN_FLIGHT = 4;
/** Results delivered before a fault, and again after it, so that each fault strikes (and is left) under load. */
const CALLS_AROUND_FAULT = 300;

interface Fault {
  readonly name: string;
  /** Strikes under `load`; resolves once the fleet is whole again, with the instance killed (if one was) and when. */
  run(fleet: Fleet, load: FleetLoad, phase: number): Promise<{ killed?: FleetInstance; at?: number }>;
}

const allFaults: Fault[] = [
  {
    name: 'Redis master SIGKILL',
    async run(fleet, load, phase) {
      const master = await fleet.store.master(redisKeyOf(phase));
      const refused = refusals(load);
      await master.process.killGroup();
      if (!fleet.store.failsOver) await until('calls refused while the store has no primary', () => refusals(load) - refused >= 20);
      await fleet.store.revive(master);
      return {};
    },
  },
  ...(WORKERS > 1
    ? [{
        name: 'worker SIGKILL',
        async run(fleet: Fleet) {
          // The worker holding the most client connections (a WebSocket among them, most likely), so that the
          // kill strikes calls in flight.
          const { instance, worker } = await busiestWorker(fleet);
          const at = Date.now();
          process.kill(worker, 'SIGKILL');
          // The primary replaces it: the instance has its workers again.
          await until('the killed worker to be replaced', () => {
            const workers = childProcesses(instance.process.pid).filter((child) => child.command === 'node');
            return workers.length === WORKERS && workers.every((w) => w.pid !== worker);
          }, 30_000);
          return { killed: instance, at };
        },
      }]
    : []),
  {
    name: 'instance SIGKILL',
    async run(fleet) {
      const instance = fleet.instances[1]!;
      const at = Date.now();
      await instance.process.killGroup();
      await until('HAProxy to take the dead instance out', async () => (await fleet.balancer.serverStates())[instance.name]?.startsWith('DOWN') === true);
      await fleet.restart(instance);
      return { killed: instance, at };
    },
  },
  {
    name: `Redis master SIGSTOP > ${COMMAND_TIMEOUT_MS} ms`,
    async run(fleet, load, phase) {
      const master = await fleet.store.master(redisKeyOf(phase));
      const refused = refusals(load);
      const stoppedAt = Date.now();
      master.process.signal('SIGSTOP');
      try {
        // Stalled past the command timeout several times over, and felt by the clients.
        await until('calls refused during the stall', () => refusals(load) - refused >= 20 && Date.now() - stoppedAt >= 5 * COMMAND_TIMEOUT_MS);
      } finally {
        master.process.signal('SIGCONT');
      }
      return {};
    },
  },
];

// TOLLGATE_FLEET_FAULTS=<words> runs only the faults whose names contain one of them (when looking into one).
const only = process.env.TOLLGATE_FLEET_FAULTS?.split(',').map((w) => w.trim().toLowerCase());
const faults = allFaults.filter((f) => only === undefined || only.some((w) => f.name.toLowerCase().includes(w)));

/** Runs `command args` on `host` and resolves with its output. */
function outputOf(host: Host, command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = host.spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', () => resolve(out));
  });
}

/** The worker (of any instance) with the most established connections on its instance's port, by `ss`. */
async function busiestWorker(fleet: Fleet): Promise<{ instance: FleetInstance; worker: number }> {
  let best: { instance: FleetInstance; worker: number; connections: number } | undefined;
  for (const instance of fleet.instances) {
    const workers = new Set(childProcesses(instance.process.pid).filter((c) => c.command === 'node').map((c) => c.pid));
    const lines = (await outputOf(instance.host, 'ss', ['-Htnp', 'state', 'established', `( sport = :${instance.port} )`])).split('\n');
    const counts = new Map<number, number>();
    for (const line of lines) {
      if (!line.includes(`${instance.host.address}:${instance.port}`)) continue;
      for (const match of line.matchAll(/pid=(\d+)/g)) {
        const pid = Number(match[1]);
        if (workers.has(pid)) counts.set(pid, (counts.get(pid) ?? 0) + 1);
      }
    }
    for (const worker of workers) {
      const connections = counts.get(worker) ?? 0;
      if (best === undefined || connections > best.connections) best = { instance, worker, connections };
    }
  }
  if (best === undefined) throw new Error('no worker process under any instance');
  return best;
}

/** Calls refused because the store was unreachable (METERING_UNAVAILABLE), over both transports. */
function refusals(load: FleetLoad): number {
  return load.errors('rpc -33507/503') + load.errors('rpc -33507/ws');
}

function keysOf(phase: number): { big: string; small: string } {
  return { big: `fleet-phase${phase}-big-key-0001`, small: `fleet-phase${phase}-small-key-001` };
}

const idOf = (key: string): string => key.replace(/-key-\d+$/, '');

/** A Redis key of the phase's big key: every Redis key of an API key carries its id as hash tag, so this one's master holds them all. */
const redisKeyOf = (phase: number): string => `{${idOf(keysOf(phase).big)}}`;

const keys = faults.flatMap((_, phase) => {
  const { big, small } = keysOf(phase);
  return [{ key: big, id: idOf(big), plan: 'fleet' }, { key: small, id: idOf(small), plan: 'small' }];
});

const startedAt = Date.now();
const fleet = await startFleet({
  instances: INSTANCES,
  workers: WORKERS,
  store: STORE === 'cluster' ? startRedisCluster : startSingleRedis,
  keys,
  plans: {
    fleet: { dailyCredits: 1e12, creditsPerSecond: 1e12, failover: false },
    small: { dailyCredits: SMALL_BALANCE_CALLS * COST, creditsPerSecond: 1e12, failover: false },
  },
  // With replicas (Cluster), a debit counts once a replica has it: a master SIGKILLed loses no acknowledged debit.
  redisSettings: { whenUnavailable: 'refuse', commandTimeoutMs: COMMAND_TIMEOUT_MS, usageFlushMs: USAGE_FLUSH_MS, replicaAcks: STORE === 'cluster' ? 1 : 0 },
  hosts: (process.env.TOLLGATE_FLEET_HOSTS as 'auto' | 'netns' | 'loopback' | undefined) ?? 'auto',
}).catch((error: unknown) => {
  // Said in the TAP output, where a CI log shows it (a top-level throw would only reach stderr).
  t.fail(`the fleet did not start within ${Math.round((Date.now() - startedAt) / 1000)} s: ${String((error as Error)?.message ?? error).slice(-8000)}`);
  process.exit(1);
});
t.comment(`the fleet started in ${Math.round((Date.now() - startedAt) / 1000)} s`);
t.teardown(() => fleet.close());
const documented = documentedErrorKinds();

const table: string[] = [
  `Fleet: ${INSTANCES} instances × ${WORKERS} worker(s), ${fleet.network.kind} hosts, Redis ${fleet.store.kind}, HAProxy`,
  '| Fault | Charged | Delivered | Lost in flight | Usage (calls) | Answered | Errors |',
  '|---|---|---|---|---|---|---|',
];
t.teardown(() => console.log(`[fleet]\n${table.join('\n')}`));

/** Reads the books of `ids` until they hold still (the instances write usage every usageFlushMs). */
async function settledBooks(ids: readonly string[]): Promise<Awaited<ReturnType<Fleet['books']>>> {
  let books = await fleet.books(ids, METHOD);
  await steady('the books to settle', async () => {
    books = await fleet.books(ids, METHOD);
    return Object.values(books).reduce((n, b) => n + b.used + b.calls * 1e9, 0);
  }, 10 * USAGE_FLUSH_MS + 300);
  return books;
}

async function underFault(t: Test, phase: number, fault: Fault): Promise<void> {
  const { big, small } = keysOf(phase);
  const load = startFleetLoad({
    socketPath: fleet.balancer.socketPath,
    network: '/eth',
    method: METHOD,
    http: [{ key: big, loops: HTTP_LOOPS }, { key: small, loops: 2 }],
    ws: [{ key: big, connections: WS_CONNECTIONS, inFlight: WS_IN_FLIGHT }],
  });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : load.stop()));
  await until('calls before the fault', () => load.delivered() >= CALLS_AROUND_FAULT, 60_000);
  const outcome = await fault.run(fleet, load, phase);
  const after = load.delivered();
  // And the small key spent: its last calls refused for its balance, under whatever the fault left.
  await until('calls after the fault, and the small key spent', () => load.delivered() >= after + CALLS_AROUND_FAULT && (load.tallies.get(small)?.errors.get('rpc -33000/402') ?? 0) > 0, 60_000);
  await load.stop();
  stopped = true;

  const books = await settledBooks([idOf(big), idOf(small)]);
  const row = { charged: 0, delivered: 0, lost: 0, usage: 0, answered: 0, errors: new Map<string, number>() };
  for (const key of [big, small]) {
    const tally = load.tallies.get(key)!;
    const book = books[idOf(key)]!;
    const charged = book.used / COST;
    // Usage the killed instance counted but had not written yet: the calls it answered in its last flush
    // periods before the kill (the documented crash window; the margin covers the client seeing them later).
    const unwritten = outcome.killed === undefined || outcome.at === undefined
      ? 0
      : load.answers.filter((a) => a.key === key && a.server === outcome.killed!.name && a.at >= outcome.at! - 2 * USAGE_FLUSH_MS - 250).length;
    row.charged += charged;
    row.delivered += tally.delivered;
    row.lost += tally.lost;
    row.usage += book.calls;
    row.answered += tally.answered;
    for (const [kind, n] of tally.errors) row.errors.set(kind, (row.errors.get(kind) ?? 0) + n);
    t.ok(charged >= tally.delivered, `${key}: every delivered result is charged (${charged} >= ${tally.delivered})`);
    t.ok(charged <= tally.delivered + tally.lost, `${key}: charged beyond delivered only for calls lost in flight (${charged - tally.delivered} <= ${tally.lost})`);
    t.ok(book.calls <= tally.answered + tally.lost && book.calls >= tally.answered - unwritten, `${key}: usage counts the calls answered (${book.calls} of ${tally.answered}, ${tally.lost} lost in flight, ${unwritten} unwritten by a killed instance)`);
    if (outcome.killed === undefined) t.equal(book.credits, book.used, `${key}: usage credits = credits charged`);
    else t.ok(book.credits <= book.used && book.used - book.credits <= (tally.lost + unwritten) * COST, `${key}: usage credits trail credits charged only by the crash window (${(book.used - book.credits) / COST} calls)`);
    for (const kind of tally.errors.keys()) t.ok(documented.has(kind), `${key}: "${kind}" is a documented error`);
  }
  const smallCharged = books[idOf(small)]!.used / COST;
  t.ok(smallCharged <= SMALL_BALANCE_CALLS, `the small key is never spent beyond its balance (${smallCharged} of ${SMALL_BALANCE_CALLS} calls)`);
  t.ok((load.tallies.get(small)!.errors.get('rpc -33000/402') ?? 0) > 0, 'and was refused with CREDITS_EXHAUSTED once spent');
  if (outcome.killed === undefined) t.equal(row.lost, 0, 'no call was lost without an answer: the gateways answered every one');

  const errors = [...row.errors].sort().map(([kind, n]) => `${kind}: ${n}`).join(', ') || 'none';
  const line = `| ${fault.name} | ${row.charged} | ${row.delivered} | ${row.lost} | ${row.usage} | ${row.answered} | ${errors} |`;
  table.push(line);
  console.log(`[fleet] ${line}`);
  // Looking into one fault: what the balancer and the instances logged.
  if (process.env.TOLLGATE_FLEET_FAULTS !== undefined) {
    console.log(fleet.balancer.output());
    for (const instance of fleet.instances) console.log(`${instance.name}:\n${instance.process.output()}`);
  }
}

for (const [phase, fault] of faults.entries()) {
  t.test(`${fault.name} under HTTP and WebSocket load through HAProxy`, (t) => underFault(t, phase, fault));
}
