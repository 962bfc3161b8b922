import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guardChild } from '../../packages/devnet/src/orphan-guard.js';
import { freePort } from '@tollgate/devnet';

/** A `redis-server` child process on a free loopback port, without persistence. */
export interface RedisServer {
  /** Its port. */
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Its pid while it runs. */
  readonly pid: number | undefined;
  /** Kills it with SIGKILL (an outage) and waits until it is gone. */
  kill(): Promise<void>;
  /** Stops it with SIGSTOP (a stall: its sockets stay open, nothing is answered). */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  /** Starts it again on the same port (empty, as after a crash without persistence; with an append-only file, as it was). */
  restart(): Promise<void>;
  /** Stops it for good. Idempotent. */
  stop(): Promise<void>;
}

/** Whether `redis-server` can be started here. */
export async function redisAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}


function launch(port: number, args: readonly string[]): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Never outlives the test: killed when it exits, and by a watchdog when it is killed (a timeout's SIGALRM).
  const guard = guardChild(child);
  child.once('exit', () => void guard.release());
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not get ready on port ${port}: ${output}`));
    }, 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/ready to accept/i.test(output)) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code} before getting ready: ${output}`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function gone(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts `redis-server --port N --bind 127.0.0.1 --save '' --appendonly no` on a free port and waits
 * for "ready to accept"; retries another port if the one picked was taken meanwhile. Its working folder
 * is a temporary one of its own (removed by `stop()`; `--dir` in `extraArgs` wins): even without `--save`
 * a master writes a snapshot for a replica's first sync, and that file must not land in the checkout.
 */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-redis-'));
  extraArgs = ['--dir', dir, ...extraArgs];
  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 1; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, extraArgs);
    } catch (error) {
      if (attempt >= 3) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  let current: ChildProcess | undefined = child;
  let stopped = false;
  const kill = async (): Promise<void> => {
    const dying = current;
    current = undefined;
    dying?.kill('SIGKILL');
    await gone(dying);
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return current?.pid;
    },
    kill,
    pause() {
      current?.kill('SIGSTOP');
    },
    resume() {
      current?.kill('SIGCONT');
    },
    async restart() {
      if (stopped) throw new Error('the Redis server was stopped');
      await kill();
      current = await launch(port, extraArgs);
    },
    async stop() {
      stopped = true;
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
