import { spawn, type ChildProcess } from 'node:child_process';
import { request, type Agent } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayConfigInput } from '../../core/index.js';
import { childProcesses } from './processes.js';
import { TSX_NODE_ARGS } from './tsx-node-args.js';

const main = fileURLToPath(new URL('../../examples/gateway/main.ts', import.meta.url));

/** `tollgate start --workers n` running in a child process. */
export interface WorkersGateway {
  /** The primary. */
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  /** The folder of the SQLite store and the config file. */
  readonly dir: string;
  /** The config file. */
  readonly file: string;
  /** Everything written so far (stdout and stderr, the workers' included). */
  output(): string;
  /** The pids of the workers (the primary's node children). */
  workerPids(): number[];
  /** Resolves with the primary's exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
}

/**
 * Writes `config` into a fresh folder and runs `tollgate start --config <it> --port 0 ...args`, with
 * `--data-dir <it>` unless the config names its SQLite file; waits for the banner.
 */
export async function startWorkersGateway(config: GatewayConfigInput, args: readonly string[], timeoutMs = 90_000, env: Record<string, string> = {}): Promise<WorkersGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-workers-'));
  const file = join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify(config));
  const dataDir = config.plugins?.['ledger-sqlite']?.path === undefined ? ['--data-dir', dir] : [];
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, 'start', '--config', file, ...dataDir, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not start: ${output}`)), timeoutMs);
    const check = (): void => {
      const listening = /Listening on (http:\/\/[^\s/]+)[\s\S]*Workers:/.exec(output);
      if (listening === null) return;
      clearTimeout(timer);
      resolve(listening[1]!);
    };
    child.stdout!.on('data', check);
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`the gateway exited with ${code}: ${output}`)); });
  });
  let origin: string;
  try {
    origin = await started;
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    child,
    origin,
    port: Number(new URL(origin).port),
    dir,
    file,
    output: () => output,
    workerPids: () => childProcesses(child.pid!).filter((c) => c.command === 'node').map((c) => c.pid),
    exited,
  };
}

/** Kills what is left of a {@link WorkersGateway} (the primary and its workers) and removes its folder. */
export async function cleanUpWorkersGateway(gateway: WorkersGateway): Promise<void> {
  const workers = gateway.workerPids();
  if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
  for (const pid of workers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await gateway.exited;
  rmSync(gateway.dir, { recursive: true, force: true });
}

/** Runs another `tollgate` command (`usage`, `keys`) on the gateway's config and store; resolves with its exit code and output. */
export function runTollgate(gateway: WorkersGateway, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, ...args, '--config', gateway.file, '--data-dir', gateway.dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** The API key the workers tests' gateways serve. */
export const WORKERS_KEY = 'workers-test-key-0001';
/** A call every EVM node answers at once. */
export const CHAIN_ID_CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });

/** One JSON-RPC call over `agent`; resolves with the status, the parsed body and the client's local port. */
export function workersCall(origin: string, agent: Agent, body = CHAIN_ID_CALL): Promise<{ status: number; body: { result?: unknown; error?: unknown }; localPort: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/eth/v3/${WORKERS_KEY}`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(text) as { result?: unknown }, localPort: req.socket!.localPort! });
        } catch (error) {
          reject(error as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A gateway config on one upstream (by URL or embedded) with the workers tests' key. */
export function workersConfig(upstream: { url: string } | { embedded: string }, extra: Partial<GatewayConfigInput['server']> = {}): GatewayConfigInput {
  return {
    server: { host: '127.0.0.1', port: 0, ...extra },
    log: { level: 'info' },
    keys: [{ key: WORKERS_KEY, id: 'workers', plan: 'growth' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'node', ...upstream }] }],
  };
}
