/**
 * Subscription fan-out: 1,000 `newHeads` subscribers, on Anvil's own WebSocket (1,000 node
 * subscriptions) and on the gateway's (one node subscription shared by all). Blocks are mined one at a
 * time; a probe subscribed on Anvil directly marks when the node sent each head, and the figure is the
 * time from there to the last of the 1,000 subscribers having it. Reports that latency's distribution,
 * events delivered per second, and the server's CPU per delivered event.
 */
import { WebSocket } from 'ws';
import { loadavg } from 'node:os';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { cpuDelta, ownCpuTime, totalCpuTime } from '../lib/cpu.js';
import { compare, startServer, summarize, type BenchOptions, type RoundResult } from '../lib/harness.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';
import { BENCH_KEY, BENCH_NETWORK } from '../config.js';

/** Subscribers, spread over connections (the gateway caps connections per key). */
const SUBSCRIBERS = 1_000;
const CONNECTIONS = 20;

interface Subscribers {
  /** Resolves when every subscriber has head `number`. */
  everyoneHas(number: number): Promise<number>;
  close(): void;
}

/** Opens the subscribers: `SUBSCRIBERS` newHeads subscriptions over `CONNECTIONS` sockets to `url`. */
async function subscribe(url: string): Promise<Subscribers> {
  const perConnection = SUBSCRIBERS / CONNECTIONS;
  const counts = new Map<number, number>();
  const waiters = new Map<number, (at: number) => void>();
  const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    let answered = 0;
    socket.on('message', (data) => {
      const text = String(data);
      if (!text.includes('"eth_subscription"')) {
        if (++answered === perConnection) resolve(socket);
        return;
      }
      // The block number is all that is read: a cheap scan instead of a parse keeps the load generator light.
      const at = text.indexOf('"number":"');
      const number = Number.parseInt(text.slice(at + 10, text.indexOf('"', at + 10)), 16);
      const n = (counts.get(number) ?? 0) + 1;
      counts.set(number, n);
      if (n === SUBSCRIBERS) {
        counts.delete(number);
        waiters.get(number)?.(performance.now());
        waiters.delete(number);
      }
    });
    socket.once('open', () => {
      for (let i = 0; i < perConnection; i++) socket.send(`{"jsonrpc":"2.0","id":${i},"method":"eth_subscribe","params":["newHeads"]}`);
    });
    socket.once('error', reject);
  })));
  return {
    everyoneHas: (number) => new Promise((resolve) => waiters.set(number, resolve)),
    close: () => { for (const s of sockets) s.terminate(); },
  };
}

/** A subscriber on the node itself: when the node sent each head. */
async function probe(anvil: AnvilInstance): Promise<{ sent(number: number): Promise<number>; close(): void }> {
  const socket = new WebSocket(anvil.wsUrl, { perMessageDeflate: false });
  const waiters = new Map<number, (at: number) => void>();
  socket.on('message', (data) => {
    const now = performance.now();
    const text = String(data);
    const at = text.indexOf('"number":"');
    if (at === -1) return;
    const number = Number.parseInt(text.slice(at + 10, text.indexOf('"', at + 10)), 16);
    waiters.get(number)?.(now);
    waiters.delete(number);
  });
  await new Promise<void>((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject); });
  socket.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
  await new Promise((resolve) => socket.once('message', resolve));
  return { sent: (number) => new Promise((resolve) => waiters.set(number, resolve)), close: () => socket.terminate() };
}

async function measure(name: string, url: string, anvil: AnvilInstance, pids: readonly number[], blocks: number, round: number): Promise<RoundResult> {
  const subscribers = await subscribe(url);
  const node = await probe(anvil);
  try {
    const latencies: number[] = [];
    const serverBefore = totalCpuTime(pids);
    const upstreamBefore = totalCpuTime([anvil.pid]);
    const ownBefore = ownCpuTime();
    const started = performance.now();
    let number = Number.parseInt(await anvil.rpc<string>('eth_blockNumber'), 16);
    for (let i = 0; i < blocks; i++) {
      number++;
      const sent = node.sent(number);
      const everyone = subscribers.everyoneHas(number);
      await anvil.rpc('evm_mine');
      const [from, to] = await Promise.all([sent, everyone]);
      latencies.push(to - from);
    }
    const seconds = (performance.now() - started) / 1000;
    const server = cpuDelta(serverBefore, totalCpuTime(pids));
    const upstream = cpuDelta(upstreamBefore, totalCpuTime([anvil.pid]));
    const own = cpuDelta(ownBefore, ownCpuTime());
    const events = blocks * SUBSCRIBERS;
    const sorted = latencies.sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
    const perEvent = (cpu: number): number => (cpu / events) * 1e6;
    process.stderr.write(`[bench] round ${round} ${name.padEnd(8)} node→last subscriber p50 ${at(0.5).toFixed(2)} ms p99 ${at(0.99).toFixed(2)} ms; server ${perEvent(server.user + server.system).toFixed(2)} µs CPU per event; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
    return {
      round,
      seconds,
      responses: events,
      ok: events,
      okPerSecond: events / seconds,
      latency: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? NaN, mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length) },
      non2xx: 0,
      badBody: 0,
      transportErrors: 0,
      timeouts: 0,
      statuses: {},
      samples: [],
      serverCores: (server.user + server.system) / seconds,
      upstreamCores: (upstream.user + upstream.system) / seconds,
      loadgenCores: (own.user + own.system) / seconds,
      serverMicrosPerRequest: perEvent(server.user + server.system),
      serverUserMicrosPerRequest: perEvent(server.user),
      serverSystemMicrosPerRequest: perEvent(server.system),
      warmupFailures: 0,
      warmupResponses: 0,
    };
  } finally {
    node.close();
    subscribers.close();
  }
}

const scenario: Scenario = {
  name: 'fan-out',
  description: '1,000 newHeads subscribers: on Anvil\'s own WebSocket vs one shared upstream subscription through the gateway',
  targets: ['direct', 'gateway'],

  async run(options: BenchOptions) {
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    const anvil = await startAnvil({ noMining: true });
    const servers: ServerHandle[] = [];
    const blocks = options.quick ? 20 : 100;
    try {
      const targets: Array<{ name: string; description: string; url: string; pids: readonly number[] }> = [];
      if (wanted('direct')) targets.push({ name: 'direct', description: 'Anvil\'s own WebSocket: 1,000 node subscriptions', url: anvil.wsUrl, pids: [anvil.pid] });
      if (wanted('gateway')) {
        const gateway = await startServer('gateway', 'bench/servers/ws-gateway.ts', { upstream: anvil.url, 'ws-upstream': anvil.wsUrl }, options);
        servers.push(gateway);
        targets.push({ name: 'gateway', description: 'Tollgate: one upstream subscription, fanned out to 1,000 subscribers, each event metered', url: `${gateway.url.replace(/^http/, 'ws')}/${BENCH_NETWORK}/ws/v3/${BENCH_KEY}`, pids: gateway.ready.pids });
      }
      const rounds = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
      // `--profile`: the gateway's profiler starts now (start-up left out); it writes the profile as it stops.
      if (options.profile) for (const server of servers) server.signal('SIGUSR2');
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of targets) rounds.get(target.name)!.push(await measure(target.name, target.url, anvil, target.pids, blocks, round));
      }
      const measured = targets.map((t) => summarize(t.name, t.description, rounds.get(t.name)!));
      return {
        scenario: scenario.name,
        description: scenario.description,
        targets: measured,
        comparisons: compare(measured, [{ numerator: 'gateway', denominator: 'direct' }]),
        notes: [
          `${SUBSCRIBERS} newHeads subscribers over ${CONNECTIONS} connections; ${blocks} blocks mined one at a time (evm_mine), the next once every subscriber had the last`,
          'latency columns: from the node sending a head (a probe subscribed on Anvil) to the last of the 1,000 subscribers having it; goal p99 <= 10 ms',
          'req/s is events delivered per second; CPU µs/req is the server\'s CPU per delivered event (for direct, Anvil\'s)',
          `load average at the end (uptime): ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
        ],
      };
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await anvil.stop();
    }
  },
};

export default scenario;
