import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { hostPort, type ResolvedRedisSettings } from './settings.js';

/** The parts of the `ioredis` package used here: passed in by each plugin, which loads it as its peer. */
export interface IoredisModule {
  /** The client of one Redis. */
  readonly Redis: typeof Redis;
  /** The client of a Redis Cluster. */
  readonly Cluster: typeof Cluster;
}

/**
 * A client of the store's Redis: one Redis (fixed, or found through Sentinel) or a Redis Cluster. Both
 * speak the same commands; a Cluster routes each to the master of its key's hash slot.
 */
export type AnyRedis = Redis | Cluster;

/** Which kind of Redis the settings point at. */
export type RedisTopology = 'single' | 'sentinel' | 'cluster';

/** The kind of Redis `settings` select. */
export function topologyOf(settings: Pick<ResolvedRedisSettings, 'cluster' | 'sentinels'>): RedisTopology {
  if (settings.cluster !== undefined) return 'cluster';
  return settings.sentinels !== undefined ? 'sentinel' : 'single';
}

/** The user name, password and TLS of the URL, which apply to every node of a Cluster or Sentinel setup. */
function credentials(url: string): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  const parsed = new URL(url);
  return {
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** What the store asks of any connection: fail fast, never queue, never resend a command whose answer was lost. */
export interface ClientBehaviour {
  /** How long a command may take, in ms. */
  readonly commandTimeoutMs: number;
  /** How long a connection attempt may take, in ms. */
  readonly connectTimeoutMs: number;
  /** Group the commands of one event-loop turn into one write. */
  readonly autoPipelining: boolean;
  /**
   * Commands written as soon as they are called, outside auto-pipelining: those the caller already
   * groups itself, for which ioredis's pipeline (an object per turn) would only add work and a turn.
   */
  readonly writtenAtOnce?: readonly string[];
  /** Delay before the n-th reconnection attempt, in ms. */
  readonly retryDelay: (attempt: number) => number;
}

/**
 * Creates the client for `settings` (not yet connected: `lazyConnect`).
 *
 * - One Redis: ioredis on the URL.
 * - Sentinel: ioredis asks the sentinels for the master named `name`, and again at every reconnection,
 *   so a promoted replica is found by itself.
 * - Cluster: ioredis's Cluster client, seeded with `cluster.nodes`; it follows MOVED and ASK redirections
 *   and a failover (a command on a connection that closed is sent again once the slots are refreshed).
 *   Every command the store sends is safe to send again (each write carries an id the scripts remember),
 *   which is what makes those resends harmless. Reads go to masters only: a replica may lag.
 */
export function createRedisClient(ioredis: IoredisModule, settings: Pick<ResolvedRedisSettings, 'url' | 'cluster' | 'sentinels' | 'name'>, behaviour: ClientBehaviour): AnyRedis {
  const common: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: behaviour.commandTimeoutMs,
    connectTimeout: behaviour.connectTimeoutMs,
    retryStrategy: behaviour.retryDelay,
  };
  const pipelining = { enableAutoPipelining: behaviour.autoPipelining, autoPipeliningIgnoredCommands: [...(behaviour.writtenAtOnce ?? [])] };
  const topology = topologyOf(settings);
  if (topology === 'cluster') {
    const options: ClusterOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      ...pipelining,
      scaleReads: 'master',
      // Up to 16 redirections or retries, 100 ms apart: long enough for a replica to take over a slot
      // (cluster-node-timeout plus an election) or for a slot's keys to migrate, in most deployments.
      maxRedirections: 16,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: behaviour.connectTimeoutMs,
      clusterRetryStrategy: behaviour.retryDelay,
      redisOptions: { ...common, ...credentials(settings.url) },
    };
    return new ioredis.Cluster(settings.cluster!.nodes.map(hostPort), options);
  }
  if (topology === 'sentinel') {
    return new ioredis.Redis({
      ...common,
      ...credentials(settings.url),
      ...pipelining,
      sentinels: settings.sentinels!.map(hostPort),
      name: settings.name!,
      role: 'master',
      // ioredis's failover detector keeps its sentinel connections open after disconnect(), so a stopped
      // gateway would not exit: a switch of master is learnt from the failed command and the reconnection.
      failoverDetector: false,
      sentinelRetryStrategy: behaviour.retryDelay,
    });
  }
  return new ioredis.Redis(settings.url, { ...common, ...pipelining });
}

/**
 * Checks, once connected, that the Redis is of the kind the settings name: a Cluster node reached through
 * a plain URL (or a plain Redis named as a Cluster) would otherwise fail every command with `MOVED` or
 * `CROSSSLOT`, looking like an outage.
 *
 * @throws Error with one line that says what to use instead.
 */
export async function checkTopology(client: AnyRedis, settings: Pick<ResolvedRedisSettings, 'url' | 'cluster' | 'sentinels' | 'name'>, address: string, flags: { single: string; cluster: string }): Promise<void> {
  if (topologyOf(settings) === 'cluster') return;
  const info = await (client as Redis).info('cluster');
  if (/cluster_enabled:1/.test(info)) {
    throw new Error(`Redis at ${address} is a node of a Redis Cluster: name its nodes with ${flags.cluster} instead of ${flags.single}`);
  }
}

/**
 * Whether a seed of `settings.cluster` answers as a Redis without cluster support: asked directly (one
 * short connection) when the Cluster client could not start, to say so rather than "unreachable".
 */
export async function seedIsPlainRedis(ioredis: IoredisModule, settings: Pick<ResolvedRedisSettings, 'url' | 'cluster'>, timeoutMs: number): Promise<boolean> {
  for (const seed of settings.cluster?.nodes ?? []) {
    const probe = new ioredis.Redis({ ...hostPort(seed), ...credentials(settings.url), lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, commandTimeout: timeoutMs, retryStrategy: () => null });
    probe.on('error', () => { /* the answer below is what counts */ });
    try {
      await probe.connect();
      if (/cluster_enabled:0/.test(await probe.info('cluster'))) return true;
    } catch {
      // Not reachable: try the next seed.
    } finally {
      probe.disconnect();
    }
  }
  return false;
}
