/**
 * Debian's `haproxy` in front of several gateway instances, for tests of a fleet: one HTTP frontend that
 * carries JSON-RPC over HTTP and WebSocket upgrades alike, round-robin over the instances,
 * health-checked on `/healthz`. HAProxy runs on a host of the test's host network (inside its network
 * namespace, so that every connection it makes, health checks included, starts there) and clients reach
 * its frontend through a unix socket, which crosses namespaces. The config is written by the test (see
 * {@link haproxyConfig}); the runtime API (another unix socket) tells which instances HAProxy counts as up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guardChild } from '../../packages/devnet/src/orphan-guard.js';
import type { Host } from './host-network.js';
import { until } from './until.js';

/** An instance behind the balancer. */
export interface HaproxyServer {
  /** Its name in HAProxy (and in the `X-Fleet-Server` response header). */
  readonly name: string;
  readonly address: string;
  readonly port: number;
}

/** What {@link haproxyConfig} writes. */
export interface HaproxyConfigOptions {
  /** The unix socket clients connect to. */
  readonly frontendSocket: string;
  readonly servers: readonly HaproxyServer[];
  /** The runtime API's unix socket. */
  readonly adminSocket: string;
  /** Health check interval, ms (default 200): an instance that died is out after two failed checks. */
  readonly checkIntervalMs?: number;
}

/** A running HAProxy. */
export interface Haproxy {
  /** The unix socket of its frontend (undici: `connect: { socketPath }`; ws: `ws+unix://<path>:<request path>`). */
  readonly socketPath: string;
  readonly pid: number;
  /** The config it runs, as written. */
  readonly config: string;
  /** What it printed so far: its log of requests that did not end normally. */
  output(): string;
  /** Each server's state as HAProxy counts it (`UP`, `DOWN`, `MAINT`, `UP 1/2`...), by name. */
  serverStates(): Promise<Record<string, string>>;
  /** Waits until HAProxy counts every server named as up. */
  waitUp(names: readonly string[], timeoutMs?: number): Promise<void>;
  /** Stops it (SIGKILL: it holds no state) and removes its files. Idempotent. */
  stop(): Promise<void>;
}

/** Whether `haproxy` can be started here. */
export async function haproxyAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('haproxy', ['-v'], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/**
 * The balancer's config. Retries go to another instance only when a connection could not be made
 * (HAProxy's default `retry-on conn-failure`): a request an instance received is never sent twice, so a
 * client is never charged for one call twice. `timeout tunnel` keeps WebSocket connections open.
 */
export function haproxyConfig(options: HaproxyConfigOptions): string {
  const inter = options.checkIntervalMs ?? 200;
  return [
    'global',
    '  maxconn 4096',
    `  stats socket ${options.adminSocket} mode 600 level admin`,
    // Requests that did not end normally are logged (with HAProxy's termination state) to its stdout.
    '  log stdout format raw local0 info',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  option dontlog-normal',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    // A check waits longer than its interval: an instance slowed down (by a neighbour's start on a
    // shared CPU) is not taken out, only one that refuses connections or stays silent.
    '  timeout check 2s',
    '  timeout tunnel 1h',
    '  retries 3',
    '  option redispatch',
    // As operators configure it (docs/operations.md): the client's address for server.trustedProxies.
    '  option forwardfor',
    'frontend fleet',
    `  bind ${options.frontendSocket} mode 600`,
    '  default_backend gateways',
    'backend gateways',
    '  balance roundrobin',
    '  option httpchk GET /healthz',
    '  http-response set-header X-Fleet-Server %[srv_name]',
    `  default-server inter ${inter}ms fall 2 rise 2`,
    ...options.servers.map((s) => `  server ${s.name} ${s.address}:${s.port} check`),
    '',
  ].join('\n');
}

function adminCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = connect(socket);
    let out = '';
    client.on('data', (chunk: Buffer) => (out += chunk.toString()));
    client.on('end', () => resolve(out));
    client.on('error', reject);
    client.end(`${command}\n`);
  });
}

function waitListening(child: ChildProcess, socketPath: string, output: () => string): Promise<void> {
  return until(`haproxy to listen on ${socketPath}: ${output()}`, () => {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}: ${output()}`);
    return new Promise<boolean>((resolve) => {
      const probe = connect(socketPath);
      probe.once('connect', () => { probe.destroy(); resolve(true); });
      probe.once('error', () => resolve(false));
    });
  }, 20_000, 50);
}

/** Starts HAProxy on `host` in front of `servers` and waits until its frontend socket accepts connections. */
export async function startHaproxy(host: Host, options: { servers: readonly HaproxyServer[]; checkIntervalMs?: number }): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-haproxy-'));
  const adminSocket = join(dir, 'admin.sock');
  const frontendSocket = join(dir, 'fleet.sock');
  const config = haproxyConfig({ ...options, frontendSocket, adminSocket });
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  // -db: stay in the foreground, so that the child is HAProxy itself (its pid is the one to stop).
  const child = host.spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = guardChild(child);
  child.once('exit', () => void guard.release());
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGKILL');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    })());
  try {
    await waitListening(child, frontendSocket, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  const serverStates = async (): Promise<Record<string, string>> => {
    // `show stat` is CSV: pxname,svname,...,status (18th column).
    const csv = await adminCommand(adminSocket, 'show stat');
    const states: Record<string, string> = {};
    for (const line of csv.split('\n')) {
      const cells = line.split(',');
      if (cells[0] === 'gateways' && cells[1] !== 'BACKEND' && cells[1] !== undefined && cells[17] !== undefined) states[cells[1]] = cells[17];
    }
    return states;
  };
  return {
    socketPath: frontendSocket,
    output: () => output,
    pid: child.pid!,
    config,
    serverStates,
    async waitUp(names, timeoutMs = 30_000) {
      await until(`HAProxy to count ${names.join(', ')} as up`, async () => {
        const states = await serverStates();
        return names.every((name) => states[name] === 'UP');
      }, timeoutMs, 50);
    },
    stop,
  };
}
