/**
 * Subscription fan-out, whatever the stream: `SUBSCRIBERS` subscribers on the node's own WebSocket (one
 * node subscription each) and on the gateway's (one node subscription shared by all). The node is made to
 * send one event at a time; a probe subscribed on the node directly marks when it sent each, and the
 * figure is the time from there to the last of the subscribers having it. Reports that latency's
 * distribution, events delivered per second, and the server's CPU per delivered event.
 */
import { WebSocket } from 'ws';
import { loadavg } from 'node:os';
import { cpuDelta, ownCpuTime, totalCpuTime } from './cpu.js';
import { compare, startServer, summarize, type BenchOptions, type RoundResult } from './harness.js';
import type { ServerHandle } from './processes.js';
import type { ScenarioReport } from './scenario.js';
import { BENCH_KEY } from '../config.js';

/** Subscribers, spread over connections (the gateway caps connections per key). */
export const SUBSCRIBERS = 1_000;
/** Connections the subscribers are spread over. */
export const CONNECTIONS = 20;

/** The stream a fan-out measures, and the node that sends it. */
export interface FanOutStream {
  /** The subscribe call's `method` and `params` members, as JSON text (`"method":"slotSubscribe","params":[]`). */
  readonly subscribe: string;
  /** Text only a notification of the stream holds (its method name, quoted). */
  readonly marker: string;
  /** The event's sequence number (a block number, a slot), read from a notification's text with a cheap scan. */
  numberOf(text: string): number;
  /** The node's own WebSocket URL. */
  readonly nodeWsUrl: string;
  /** The node's process ids, for its CPU (none when it runs in this process). */
  readonly nodePids: readonly number[];
  /** The number of the last event the node sent. */
  current(): Promise<number>;
  /** Makes the node send the next event. */
  emit(): Promise<void>;
}

interface Subscribers {
  /** Resolves when every subscriber has event `number`. */
  everyoneHas(number: number): Promise<number>;
  close(): void;
}

/** Opens the subscribers: `SUBSCRIBERS` subscriptions over `CONNECTIONS` sockets to `url`. */
async function subscribe(url: string, stream: FanOutStream): Promise<Subscribers> {
  const perConnection = SUBSCRIBERS / CONNECTIONS;
  const counts = new Map<number, number>();
  const waiters = new Map<number, (at: number) => void>();
  const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    let answered = 0;
    socket.on('message', (data) => {
      const text = String(data);
      if (!text.includes(stream.marker)) {
        if (++answered === perConnection) resolve(socket);
        return;
      }
      const number = stream.numberOf(text);
      const n = (counts.get(number) ?? 0) + 1;
      counts.set(number, n);
      if (n === SUBSCRIBERS) {
        counts.delete(number);
        waiters.get(number)?.(performance.now());
        waiters.delete(number);
      }
    });
    socket.once('open', () => {
      for (let i = 0; i < perConnection; i++) socket.send(`{"jsonrpc":"2.0","id":${i},${stream.subscribe}}`);
    });
    socket.once('error', reject);
  })));
  return {
    everyoneHas: (number) => new Promise((resolve) => waiters.set(number, resolve)),
    close: () => { for (const s of sockets) s.terminate(); },
  };
}

/** A subscriber on the node itself: when the node sent each event. */
async function probe(stream: FanOutStream): Promise<{ sent(number: number): Promise<number>; close(): void }> {
  const socket = new WebSocket(stream.nodeWsUrl, { perMessageDeflate: false });
  const waiters = new Map<number, (at: number) => void>();
  socket.on('message', (data) => {
    const now = performance.now();
    const text = String(data);
    if (!text.includes(stream.marker)) return;
    const number = stream.numberOf(text);
    waiters.get(number)?.(now);
    waiters.delete(number);
  });
  await new Promise<void>((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject); });
  socket.send(`{"jsonrpc":"2.0","id":1,${stream.subscribe}}`);
  await new Promise((resolve) => socket.once('message', resolve));
  return { sent: (number) => new Promise((resolve) => waiters.set(number, resolve)), close: () => socket.terminate() };
}

/** One round: `events` events, each sent once every subscriber had the last. */
export async function measureFanOut(name: string, url: string, stream: FanOutStream, pids: readonly number[], events: number, round: number): Promise<RoundResult> {
  const subscribers = await subscribe(url, stream);
  const node = await probe(stream);
  try {
    const latencies: number[] = [];
    const serverBefore = totalCpuTime(pids);
    const upstreamBefore = totalCpuTime(stream.nodePids);
    const ownBefore = ownCpuTime();
    const started = performance.now();
    let number = await stream.current();
    for (let i = 0; i < events; i++) {
      number++;
      const sent = node.sent(number);
      const everyone = subscribers.everyoneHas(number);
      await stream.emit();
      const [from, to] = await Promise.all([sent, everyone]);
      latencies.push(to - from);
    }
    const seconds = (performance.now() - started) / 1000;
    const server = cpuDelta(serverBefore, totalCpuTime(pids));
    const upstream = cpuDelta(upstreamBefore, totalCpuTime(stream.nodePids));
    const own = cpuDelta(ownBefore, ownCpuTime());
    const delivered = events * SUBSCRIBERS;
    const sorted = latencies.sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
    const perEvent = (cpu: number): number => (cpu / delivered) * 1e6;
    process.stderr.write(`[bench] round ${round} ${name.padEnd(8)} node→last subscriber p50 ${at(0.5).toFixed(2)} ms p99 ${at(0.99).toFixed(2)} ms; server ${perEvent(server.user + server.system).toFixed(2)} µs CPU per event; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
    return {
      round,
      seconds,
      responses: delivered,
      ok: delivered,
      okPerSecond: delivered / seconds,
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

/** What a fan-out scenario compares: the node's own WebSocket and the gateway in front of it. */
export interface FanOutTargets {
  /** The node's own WebSocket, as a target. */
  readonly direct: { readonly description: string; readonly url: string; readonly pids: readonly number[] };
  /** The args of `bench/servers/ws-gateway.ts` that put the gateway in front of the node. */
  readonly gatewayArgs: Readonly<Record<string, string>>;
  /** The gateway's network whose WebSocket the subscribers use. */
  readonly network: string;
  /** The gateway target's description. */
  readonly gatewayDescription: string;
  /** Events per round. */
  readonly events: number;
  /** What the report says of the stream (before the load average). */
  readonly notes: readonly string[];
}

/**
 * Runs a fan-out scenario: starts the gateway (when wanted), measures each target in interleaved rounds,
 * stops the gateway, and reports both with the gateway/direct ratio. The node is the scenario's to start
 * and stop.
 */
export async function runFanOut(scenario: { readonly name: string; readonly description: string }, options: BenchOptions, stream: FanOutStream, plan: FanOutTargets): Promise<ScenarioReport> {
  const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
  const servers: ServerHandle[] = [];
  try {
    const targets: Array<{ name: string; description: string; url: string; pids: readonly number[] }> = [];
    if (wanted('direct')) targets.push({ name: 'direct', ...plan.direct });
    if (wanted('gateway')) {
      const gateway = await startServer('gateway', 'bench/servers/ws-gateway.ts', plan.gatewayArgs, options);
      servers.push(gateway);
      targets.push({ name: 'gateway', description: plan.gatewayDescription, url: `${gateway.url.replace(/^http/, 'ws')}/${plan.network}/ws/v3/${BENCH_KEY}`, pids: gateway.ready.pids });
    }
    const rounds = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
    // `--profile`: the gateway's profiler starts now (start-up left out); it writes the profile as it stops.
    if (options.profile) for (const server of servers) server.signal('SIGUSR2');
    for (let round = 1; round <= options.rounds; round++) {
      for (const target of targets) rounds.get(target.name)!.push(await measureFanOut(target.name, target.url, stream, target.pids, plan.events, round));
    }
    const measured = targets.map((t) => summarize(t.name, t.description, rounds.get(t.name)!));
    return {
      scenario: scenario.name,
      description: scenario.description,
      targets: measured,
      comparisons: compare(measured, [{ numerator: 'gateway', denominator: 'direct' }]),
      notes: [...plan.notes, `load average at the end (uptime): ${loadavg().map((l) => l.toFixed(2)).join(' ')}`],
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
