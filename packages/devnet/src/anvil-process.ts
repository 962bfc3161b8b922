import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { resolveAnvilBinary } from './anvil-binary.js';
import { freePort } from './free-port.js';
import { JsonRpcClient } from './json-rpc-client.js';
import { guardChild, waitForExit } from './orphan-guard.js';

/** How to start an Anvil node. Every field is optional; the defaults are Anvil's own unless stated. */
export interface AnvilOptions {
  /** Chain id (`--chain-id`; Anvil's default is 31337). */
  readonly chainId?: number;
  /** Seconds between blocks (`--block-time`, interval mining). Default: automine, one block per transaction. */
  readonly blockTime?: number;
  /** Mine only on `evm_mine` (`--no-mining`). */
  readonly noMining?: boolean;
  /** Number of unlocked dev accounts (`--accounts`, default 10). */
  readonly accounts?: number;
  /** BIP39 mnemonic the dev accounts are derived from (`--mnemonic`; default Anvil's well-known test mnemonic). */
  readonly mnemonic?: string;
  /** Balance of every dev account, in ether (`--balance`, default 10000). */
  readonly balance?: number;
  /** Block gas limit (`--gas-limit`; Anvil's default is 30,000,000). */
  readonly gasLimit?: number | bigint;
  /** Base fee of the genesis block, in wei (`--block-base-fee-per-gas`). */
  readonly baseFee?: number | bigint;
  /** Gas price, in wei (`--gas-price`). */
  readonly gasPrice?: number | bigint;
  /** EVM hardfork (`--hardfork`, e.g. `cancun`, `prague`; default Anvil's latest). */
  readonly hardfork?: string;
  /** Transaction order in a block (`--order`): `fees` (Anvil's default) or `fifo`. */
  readonly order?: 'fees' | 'fifo';
  /** Interface to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** Port to listen on (default: a free one, retried if another process takes it first). */
  readonly port?: number;
  /** Extra command-line arguments, appended as given. */
  readonly args?: readonly string[];
  /** Path of the Anvil binary (default: {@link resolveAnvilBinary}). */
  readonly binary?: string;
  /** How long to wait for `eth_chainId` to answer, in ms (default 20,000). */
  readonly startTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL, in ms (default 3,000). */
  readonly stopTimeoutMs?: number;
}

/** A running Anvil child process. */
export interface AnvilInstance {
  /** Its HTTP JSON-RPC URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Its WebSocket URL (same port). */
  readonly wsUrl: string;
  /** The port it listens on. */
  readonly port: number;
  /** The child process. */
  readonly process: ChildProcess;
  /** The child's pid. */
  readonly pid: number;
  /** The pid of the watchdog that kills Anvil if this process dies abruptly (none on Windows). */
  readonly watchdogPid: number | undefined;
  /** The chain id it answered to `eth_chainId`. */
  readonly chainId: number;
  /** The command-line arguments it was started with. */
  readonly args: readonly string[];
  /** Calls a JSON-RPC method on it (a convenience for seeding and tests). */
  rpc<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /** The last few KiB Anvil wrote to stderr. */
  stderr(): string;
  /** SIGTERM, wait for exit, SIGKILL after `stopTimeoutMs`; resolves once the process is gone. Idempotent. */
  stop(): Promise<void>;
}

/** Anvil did not come up; `stderr` holds what it said. */
export class AnvilStartError extends Error {
  /** What Anvil wrote to stderr before failing. */
  readonly stderr: string;
  /** Whether the port was taken (the start is retried on another port). */
  readonly addressInUse: boolean;

  constructor(message: string, stderr: string) {
    super(stderr.trim() === '' ? message : `${message}\n--- anvil stderr ---\n${stderr.trim()}`);
    this.name = 'AnvilStartError';
    this.stderr = stderr;
    this.addressInUse = /address already in use|os error 98|EADDRINUSE/i.test(stderr);
  }
}

const STDERR_TAIL = 16 * 1024;
const PORT_ATTEMPTS = 5;

/** Builds Anvil's command line from {@link AnvilOptions} (without the binary). */
export function anvilArgs(options: AnvilOptions, host: string, port: number): string[] {
  const args = ['--host', host, '--port', String(port), '--silent'];
  const add = (flag: string, value: number | bigint | string | undefined): void => {
    if (value !== undefined) args.push(flag, String(value));
  };
  add('--chain-id', options.chainId);
  add('--block-time', options.blockTime);
  if (options.noMining === true) args.push('--no-mining');
  add('--accounts', options.accounts);
  add('--mnemonic', options.mnemonic);
  add('--balance', options.balance);
  add('--gas-limit', options.gasLimit);
  add('--block-base-fee-per-gas', options.baseFee);
  add('--gas-price', options.gasPrice);
  add('--hardfork', options.hardfork);
  add('--order', options.order);
  args.push(...(options.args ?? []));
  return args;
}

/**
 * Starts Anvil as a child process on a free 127.0.0.1 port and resolves once `eth_chainId` answers.
 * The child never outlives this process (an exit hook and a watchdog kill it if this process dies without
 * calling `stop()`) and never keeps it alive by itself.
 *
 * @example
 * ```ts
 * const anvil = await startAnvil({ chainId: 1 });
 * try { console.log(anvil.url, await anvil.rpc('eth_blockNumber')); } finally { await anvil.stop(); }
 * ```
 * @throws AnvilStartError when Anvil exits or does not answer in time (the message carries its stderr).
 */
export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilInstance> {
  const binary = options.binary ?? resolveAnvilBinary();
  const host = options.host ?? '127.0.0.1';
  const attempts = options.port === undefined ? PORT_ATTEMPTS : 1;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort(host));
    try {
      return await launch(binary, anvilArgs(options, host, port), host, port, options);
    } catch (error) {
      if (!(error instanceof AnvilStartError && error.addressInUse) || attempt >= attempts) throw error;
    }
  }
}

async function launch(binary: string, args: string[], host: string, port: number, options: AnvilOptions): Promise<AnvilInstance> {
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let spawnError: Error | undefined;
  child.on('error', (error) => { spawnError ??= error; });
  const guard = guardChild(child);
  let stderr = '';
  const stderrStream = child.stderr as Readable & { unref?: () => void };
  stderrStream.setEncoding('utf8');
  stderrStream.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });

  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  const client = new JsonRpcClient(url);
  const stopTimeoutMs = options.stopTimeoutMs ?? 3_000;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await guard.release();
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        const gone = waitForExit(child);
        child.ref(); // keep Node alive until it is reaped
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), stopTimeoutMs); });
        if ((await Promise.race([gone, late])) === 'late') {
          child.kill('SIGKILL');
          await gone;
        }
        clearTimeout(timer);
      }
      await client.destroy().catch(() => undefined);
    })();
    return stopping;
  };

  let chainId: number;
  try {
    chainId = await waitUntilReady(child, client, options.startTimeoutMs ?? 20_000, () => spawnError);
  } catch (error) {
    await stop();
    // Let stderr drain: 'close' follows 'exit' once the pipes are empty.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 500).unref())]);
    throw new AnvilStartError(`${(error as Error).message} (${binary} ${args.join(' ')})`, stderr);
  }

  child.unref();
  stderrStream.unref?.();
  return {
    url,
    wsUrl: `ws://${urlHost}:${port}`,
    port,
    process: child,
    pid: child.pid as number,
    watchdogPid: guard.watchdogPid,
    chainId,
    args,
    rpc: (method, params) => client.call(method, params),
    stderr: () => stderr,
    stop,
  };
}

function exitOf(child: ChildProcess): Promise<undefined> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(undefined);
    else child.once('exit', () => resolve(undefined));
  });
}

async function waitUntilReady(child: ChildProcess, client: JsonRpcClient, timeoutMs: number, spawnError: () => Error | undefined): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  // One exit promise for every poll, so a slow start does not pile up 'exit' listeners.
  const exited = exitOf(child);
  for (;;) {
    const failed = spawnError();
    if (failed !== undefined) throw new Error(`could not run Anvil: ${failed.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Anvil exited before answering (${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode})`);
    }
    try {
      // Race the call against Anvil's exit: with the port taken, the call may reach another server.
      const id = await Promise.race([client.call<string>('eth_chainId', [], 1_000), exited]);
      if (id === undefined) continue;
      return Number(BigInt(id));
    } catch {
      if (Date.now() >= deadline) throw new Error(`Anvil did not answer eth_chainId within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
