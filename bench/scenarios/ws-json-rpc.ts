/**
 * JSON-RPC over WebSocket: the same calls on long-lived connections, sent to Anvil's own WebSocket
 * endpoint directly and to the gateway's `/ws/v3/<key>` (full pipeline; the gateway reaches Anvil over
 * its pool of upstream WebSockets, the bare relay over HTTP). Each connection keeps a fixed number of
 * calls in flight; every answer is checked (its id, a `result`) before it counts. Reports messages per second, latency, and the gateway/direct ratio.
 */
import { WebSocket } from 'ws';
import { startAnvil } from '@tollgate/devnet';
import { cpuDelta, ownCpuTime, totalCpuTime } from '../lib/cpu.js';
import { compare, startServer, summarize, type BenchOptions, type RoundResult, type TargetReport } from '../lib/harness.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';
import { BENCH_KEY, BENCH_NETWORK } from '../config.js';

/** Calls each connection keeps in flight. */
const PIPELINE = 8;

interface WsTarget {
  readonly name: string;
  /** The server child, when the target started one (signalled to start a requested profile). */
  readonly server?: ServerHandle;
  readonly description: string;
  readonly url: string;
  readonly pids: readonly number[];
}

interface Tally {
  ok: number;
  bad: number;
  errors: number;
  latencies: number[];
  samples: Set<string>;
}

/** Opens `connections` sockets to `url` and drives them for `seconds`; `record` false for warm-up. */
async function drive(url: string, method: string, connections: number, seconds: number, tally: Tally, record: boolean): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  const run = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = new WebSocket(url, { perMessageDeflate: false });
      const sent = new Map<number, number>();
      let next = 1;
      const send = (): void => {
        const id = next++;
        sent.set(id, performance.now());
        socket.send(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":[]}`);
      };
      socket.on('open', () => { for (let i = 0; i < PIPELINE; i++) send(); });
      socket.on('message', (data) => {
        const now = performance.now();
        let answer: { id?: number; result?: unknown; error?: unknown };
        try {
          answer = JSON.parse(String(data)) as typeof answer;
        } catch {
          answer = {};
        }
        const started = answer.id === undefined ? undefined : sent.get(answer.id);
        if (started !== undefined) sent.delete(answer.id!);
        if (record) {
          if (started !== undefined && answer.result !== undefined) {
            tally.ok++;
            tally.latencies.push(now - started);
          } else {
            tally.bad++;
            if (tally.samples.size < 3) tally.samples.add(String(data).slice(0, 160));
          }
        }
        if (now < deadline) send();
        else if (sent.size === 0) socket.close();
      });
      socket.on('error', (error) => {
        if (record) {
          tally.errors++;
          if (tally.samples.size < 3) tally.samples.add(`connection error: ${error.message}`);
        }
      });
      socket.on('close', () => resolve());
      setTimeout(() => socket.terminate(), seconds * 1000 + 10_000).unref();
    });
  await Promise.all(Array.from({ length: connections }, run));
}

async function measure(target: WsTarget, round: number, options: BenchOptions, upstreamPids: readonly number[]): Promise<RoundResult> {
  if (options.warmup > 0) await drive(target.url, options.method, options.connections, options.warmup, { ok: 0, bad: 0, errors: 0, latencies: [], samples: new Set() }, false);
  const tally: Tally = { ok: 0, bad: 0, errors: 0, latencies: [], samples: new Set() };
  const serverBefore = totalCpuTime(target.pids);
  const upstreamBefore = totalCpuTime(upstreamPids);
  const ownBefore = ownCpuTime();
  const started = performance.now();
  await drive(target.url, options.method, options.connections, options.duration, tally, true);
  const seconds = (performance.now() - started) / 1000;
  const server = cpuDelta(serverBefore, totalCpuTime(target.pids));
  const upstream = cpuDelta(upstreamBefore, totalCpuTime(upstreamPids));
  const own = cpuDelta(ownBefore, ownCpuTime());
  const sorted = tally.latencies.sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  const perCall = (cpu: number): number => (tally.ok > 0 ? (cpu / tally.ok) * 1e6 : NaN);
  return {
    round,
    seconds,
    responses: tally.ok + tally.bad,
    ok: tally.ok,
    okPerSecond: tally.ok / seconds,
    latency: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? NaN, mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length) },
    non2xx: 0,
    badBody: tally.bad,
    transportErrors: tally.errors,
    timeouts: 0,
    statuses: {},
    samples: [...tally.samples],
    serverCores: (server.user + server.system) / seconds,
    upstreamCores: (upstream.user + upstream.system) / seconds,
    loadgenCores: (own.user + own.system) / seconds,
    serverMicrosPerRequest: perCall(server.user + server.system),
    serverUserMicrosPerRequest: perCall(server.user),
    serverSystemMicrosPerRequest: perCall(server.system),
    warmupFailures: 0,
    warmupResponses: 0,
  };
}

function report(target: WsTarget, rounds: readonly RoundResult[]): TargetReport {
  return summarize(target.name, target.description, rounds);
}

const scenario: Scenario = {
  name: 'ws-json-rpc',
  description: 'JSON-RPC over WebSocket: Anvil\'s WebSocket directly vs the Tollgate gateway\'s /ws/v3 endpoint',
  targets: ['direct', 'bare-ws-proxy', 'gateway'],

  async run(options: BenchOptions) {
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    const anvil = await startAnvil();
    const servers: ServerHandle[] = [];
    try {
      const targets: WsTarget[] = [];
      if (wanted('direct')) targets.push({ name: 'direct', description: 'Anvil\'s own WebSocket endpoint', url: anvil.wsUrl, pids: [anvil.pid] });
      if (wanted('bare-ws-proxy')) {
        const proxy = await startServer('bare-ws-proxy', 'bench/servers/bare-ws-proxy.ts', { upstream: anvil.url }, options);
        servers.push(proxy);
        targets.push({ name: 'bare-ws-proxy', server: proxy, description: 'bench/bare-ws-proxy.ts: ws in, each message relayed as is over an undici keep-alive pool to Anvil', url: proxy.url.replace(/^http/, 'ws'), pids: proxy.ready.pids });
      }
      if (wanted('gateway')) {
        const gateway = await startServer('gateway', 'bench/servers/ws-gateway.ts', { upstream: anvil.url, 'ws-upstream': anvil.wsUrl }, options);
        servers.push(gateway);
        targets.push({ name: 'gateway', server: gateway, description: 'Tollgate: ws transport, full pipeline, its pool of upstream WebSockets to Anvil (HTTP the fallback)', url: `${gateway.url.replace(/^http/, 'ws')}/${BENCH_NETWORK}/ws/v3/${BENCH_KEY}`, pids: gateway.ready.pids });
      }
      if (options.prime > 0) {
        process.stderr.write('[bench] ws-json-rpc: priming every target\n');
        for (const target of targets) await drive(target.url, options.method, options.connections, options.prime, { ok: 0, bad: 0, errors: 0, latencies: [], samples: new Set() }, false);
      }
      const rounds = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of targets) {
          // A requested profile covers the measurements only, as in the other scenarios.
          if (round === 1 && options.profile) target.server?.signal('SIGUSR2');
          const result = await measure(target, round, options, target.name === 'direct' ? [] : [anvil.pid]);
          rounds.get(target.name)!.push(result);
          process.stderr.write(`[bench] round ${round}/${options.rounds} ${target.name.padEnd(13)} ${Math.round(result.okPerSecond)} msg/s  p50 ${result.latency.p50.toFixed(2)} ms  p99 ${result.latency.p99.toFixed(2)} ms  server ${(result.serverCores * 100).toFixed(0)}% cpu\n`);
        }
      }
      const measured = targets.map((t) => report(t, rounds.get(t.name)!));
      return {
        scenario: scenario.name,
        description: scenario.description,
        targets: measured,
        comparisons: compare(measured, [
          { numerator: 'gateway', denominator: 'direct', goal: 0.8 },
          { numerator: 'gateway', denominator: 'bare-ws-proxy', goal: 1.5 },
          { numerator: 'bare-ws-proxy', denominator: 'direct' },
        ]),
        notes: [
          `${options.connections} WebSocket connections, ${PIPELINE} calls in flight on each, method ${options.method}; req/s is answered messages per second`,
          'only answers carrying a result for an id that was sent count; the gateway reaches Anvil over its upstream WebSockets, the bare relay over HTTP keep-alive',
        ],
      };
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await anvil.stop();
    }
  },
};

export default scenario;
