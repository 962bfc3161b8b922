/**
 * A gateway in a child process, for tests that need several processes or a `kill -9`:
 * `node --import tsx test/helpers/gateway-process.ts` with `TOLLGATE_TEST_GATEWAY` holding
 * `{ config, store: 'sqlite' | 'redis', clockMs?, ws?, admin? }`. It prints `READY {"port":N}` once listening; with
 * `clockMs` its clock stands still at that time and moves only when the parent sends `{ advance: ms }`
 * over IPC (answered with `{ advanced: ms }`). SIGTERM closes it cleanly.
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { createGateway, type GatewayConfigInput, type TollgatePlugin } from '../../core/index.js';
import { systemClock, type Clock } from '../../core/plugin-api.js';
import { httpTransport } from '../../plugins/http/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { ledgerSqlite } from '../../plugins/ledger-sqlite/index.js';
import { ledgerRedis } from '../../plugins/ledger-redis/index.js';
import { wsTransport, type WsTransportOptions } from '../../plugins/ws/index.js';
import { admin } from '../../plugins/admin/index.js';
import { health } from '../../plugins/health/index.js';
import { TSX_NODE_ARGS } from './tsx-node-args.js';

/** What the child is told to run. */
export interface GatewayProcessSpec {
  readonly config: GatewayConfigInput;
  readonly store: 'sqlite' | 'redis' | 'memory';
  readonly clockMs?: number;
  /** Adds the WebSocket transport with these options. */
  readonly ws?: WsTransportOptions;
  /** Adds the admin plugin (its token in `config.plugins.admin`). */
  readonly admin?: boolean;
  /** Adds the health plugin (`/healthz`, `/readyz`). */
  readonly health?: boolean;
  /** Adds the payments plugin (its settings in `config.plugins.payments`), after the store. */
  readonly payments?: boolean;
}

/** A running gateway child. */
export interface GatewayProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Moves the child's clock forward (only with `clockMs`). */
  advance(ms: number): Promise<void>;
  /** SIGKILL, and waits until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM, and waits for a clean exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** What the child wrote so far (stdout and stderr): its log lines, at the config's `log.level`. */
  output(): string;
}

const script = new URL(import.meta.url).pathname;

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Starts a gateway child and waits until it listens. */
export async function startGatewayProcess(spec: GatewayProcessSpec, timeoutMs = 60_000): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, script], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, TOLLGATE_TEST_GATEWAY: JSON.stringify(spec) },
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`gateway child not ready: ${output}`)); }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /READY (\{.*\})/.exec(output);
      if (ready !== null) {
        clearTimeout(timer);
        resolve((JSON.parse(ready[1]!) as { port: number }).port);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`gateway child exited with ${code}: ${output}`)); });
  });
  child.removeAllListeners('exit');
  return {
    child,
    output: () => output,
    origin: `http://127.0.0.1:${port}`,
    advance(ms) {
      return new Promise((resolve) => {
        const onMessage = (message: { advanced?: number }): void => {
          if (message.advanced === undefined) return;
          child.off('message', onMessage);
          resolve();
        };
        child.on('message', onMessage);
        child.send({ advance: ms });
      });
    },
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop() {
      child.kill('SIGTERM');
      return exited(child);
    },
  };
}

class SteppedClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

if (process.env.TOLLGATE_TEST_GATEWAY !== undefined && process.argv[1] === script) {
  const spec = JSON.parse(process.env.TOLLGATE_TEST_GATEWAY) as GatewayProcessSpec;
  const clock = spec.clockMs === undefined ? systemClock : new SteppedClock(spec.clockMs);
  const store: TollgatePlugin[] = spec.store === 'sqlite' ? [ledgerSqlite()] : spec.store === 'redis' ? [ledgerRedis()] : [];
  // Imported only when asked for: the payments plugin needs the x402 peers.
  const paying: TollgatePlugin[] = spec.payments === true ? [(await import('../../plugins/payments/index.js')).payments()] : [];
  const gateway = await createGateway({
    config: { ...spec.config, log: { level: 'warn', ...spec.config.log }, server: { ...spec.config.server, host: '127.0.0.1', port: 0 } },
    plugins: [...store, ...paying, ...(spec.admin === true ? [admin()] : []), ...(spec.health === true ? [health()] : []), httpTransport(), ...(spec.ws === undefined ? [] : [wsTransport(spec.ws)]), evmFamily()],
    clock,
  });
  const server = await gateway.listen();
  process.on('message', (message: { advance?: number }) => {
    if (message.advance === undefined || !(clock instanceof SteppedClock)) return;
    clock.advance(message.advance);
    process.send!({ advanced: message.advance });
  });
  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    gateway.close().then(() => process.exit(0), () => process.exit(1));
  });
  // The parent going away (its IPC channel closing) ends the child too.
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  process.stdout.write(`READY ${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
}
