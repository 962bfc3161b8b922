import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { guardChild } from '../../packages/devnet/src/orphan-guard.js';
import { freePort } from '@tollgate/devnet';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { until } from './until.js';

const run = promisify(execFile);

/** A Redis master, its replica and one sentinel watching them, all real processes on free loopback ports. */
export interface RedisSentinelSetup {
  /** The master at start. */
  readonly master: RedisServer;
  /** Its replica at start (promoted when the master dies). */
  readonly replica: RedisServer;
  /** `127.0.0.1:<sentinel port>`: what `sentinels` takes. */
  readonly sentinels: string;
  /** The master's name the sentinel watches. */
  readonly name: string;
  /** The port of the master the sentinel names now. */
  masterPort(): Promise<number>;
  /** Stops everything and removes the sentinel's folder. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a master, a replica of it (in sync before this resolves) and a sentinel (`redis-server
 * <conf> --sentinel`, quorum 1, a master silent for `downAfterMs` is failed over). Call `stop()` in
 * `t.teardown`.
 */
export async function startRedisSentinel(downAfterMs = 1000, name = 'tollgate'): Promise<RedisSentinelSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sentinel-'));
  // Their own folder: a replica's first sync writes the master's snapshot to disk.
  const master = await startRedisServer(['--dir', dir]);
  const replica = await startRedisServer(['--dir', dir, '--dbfilename', 'replica.rdb', '--replicaof', '127.0.0.1', String(master.port)]);
  const port = await freePort();
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(conf, [
    `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
    `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
    `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
    `sentinel failover-timeout ${name} 5000`,
    `sentinel parallel-syncs ${name} 1`, '',
  ].join('\n'));
  const sentinel: ChildProcess = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  const guard = guardChild(sentinel);
  sentinel.once('exit', () => void guard.release());
  const cli = async (...args: string[]): Promise<string> => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
  const masterPort = async (): Promise<number> => Number((await cli('sentinel', 'get-master-addr-by-name', name)).trim().split('\n')[1]);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (sentinel.exitCode === null && sentinel.signalCode === null) {
      const gone = new Promise((resolve) => sentinel.once('exit', resolve));
      sentinel.kill('SIGKILL');
      await gone;
    }
    await Promise.all([master.stop(), replica.stop()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until('the sentinel names the master and sees its replica', async () => {
      const port = await masterPort().catch(() => 0);
      const replicas = await cli('sentinel', 'replicas', name).catch(() => '');
      return port === master.port && replicas.includes(String(replica.port));
    }, 30_000, 100);
    await until('the replica is in sync', async () => (await run('redis-cli', ['-p', String(replica.port), 'info', 'replication'])).stdout.includes('master_link_status:up'), 30_000, 100);
  } catch (error) {
    await stop();
    throw error;
  }
  return { master, replica, sentinels: `127.0.0.1:${port}`, name, masterPort, stop };
}
