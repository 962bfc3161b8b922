/**
 * A fleet on one machine: gateway instances on hosts of their own, each running `tollgate start` (the
 * bundled gateway's CLI, from the sources), sharing a Redis store and one Anvil node on a services host,
 * behind HAProxy. Everything is a parameter the fleet test varies: how many instances, how many workers
 * each, which store.
 */
import { userEnv as userEnvOf } from '../helpers/user-env.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveAnvilBinary } from '@tollgate/devnet';
import { startHostNetwork, type Host, type HostNetwork } from '../helpers/host-network.js';
import { startHostProcess, type HostProcess } from '../helpers/host-process.js';
import { startHaproxy, type Haproxy } from '../helpers/haproxy.js';
import { TSX_NODE_ARGS } from '../helpers/tsx-node-args.js';
import { until } from '../helpers/until.js';
import type { BooksQuery, KeyBooks } from './books-child.js';
import type { FleetStore } from './fleet-store.js';

/** What fleet to start. */
export interface FleetOptions {
  /** Gateway instances, each on a host of its own. */
  readonly instances: number;
  /** Workers per instance (`tollgate start --workers`); 1 runs the plain single-process gateway. */
  readonly workers: number;
  /** Starts the store on the services host. */
  readonly store: (host: Host) => Promise<FleetStore>;
  /** The gateway config's `keys` and `plans`. */
  readonly keys: ReadonlyArray<{ readonly key: string; readonly id: string; readonly plan: string }>;
  readonly plans: Readonly<Record<string, { readonly dailyCredits: number; readonly creditsPerSecond: number; readonly failover: boolean }>>;
  /** The `ledger-redis` settings besides where Redis is (timeouts, flush period). */
  readonly redisSettings: Readonly<Record<string, unknown>>;
  /** `auto` (default): network namespaces where allowed, loopback addresses otherwise. */
  readonly hosts?: 'auto' | 'netns' | 'loopback';
}

/** A gateway instance of the fleet. */
export interface FleetInstance {
  /** Its name (`gw1`...), also its server name in HAProxy. */
  readonly name: string;
  readonly host: Host;
  readonly port: number;
  /** The running `tollgate start` (the primary, with workers). */
  readonly process: HostProcess;
}

/** A running fleet. */
export interface Fleet {
  readonly network: HostNetwork;
  readonly store: FleetStore;
  readonly balancer: Haproxy;
  readonly instances: readonly FleetInstance[];
  /** Starts an instance again on its host and port (after it was killed) and waits until HAProxy counts it up. */
  restart(instance: FleetInstance): Promise<FleetInstance>;
  /** Today's books of `ids` for `method`, read from the store. */
  books(ids: readonly string[], method: string): Promise<Record<string, KeyBooks>>;
  /** Stops everything and deletes the hosts. Idempotent. */
  close(): Promise<void>;
}

const MAIN = new URL('../../examples/gateway/main.ts', import.meta.url).pathname;
const BOOKS = new URL('./books-child.ts', import.meta.url).pathname;
const GATEWAY_READY = /Listening on http:\/\//;
// The fleet's processes run as an operator's would: without the coverage loaders tap puts into NODE_OPTIONS
// for its own children (nine gateway processes under V8 coverage, each writing its report at exit, are
// the fleet test's heaviest cost and measure nothing it checks).
const operatorEnv = userEnvOf();

/** Starts the fleet: hosts, store, node, instances (in parallel), the books reader and HAProxy. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const names = Array.from({ length: options.instances }, (_, i) => `gw${i + 1}`);
  const network = await startHostNetwork(['services', 'balancer', ...names], { kind: options.hosts ?? 'auto' });
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-fleet-'));
  const cleanups: Array<() => Promise<unknown> | void> = [() => network.close(), () => rmSync(dir, { recursive: true, force: true })];
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    })());
  try {
    const services = network.host('services');
    const store = await options.store(services);
    cleanups.push(() => store.close());

    const anvilPort = await services.port();
    // Without --silent Anvil prints where it listens: the sign it is ready, seen from outside its namespace.
    const anvil = await startHostProcess(services, resolveAnvilBinary(), ['--host', services.address, '--port', String(anvilPort)], /Listening on/);
    cleanups.push(() => anvil.killGroup());

    const configFile = join(dir, 'gateway.json');
    writeFileSync(configFile, JSON.stringify({
      plans: options.plans,
      keys: options.keys,
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: `http://${services.address}:${anvilPort}`, connections: 64 }] }],
      // Where Redis is comes from the store's flags of `tollgate start`.
      plugins: { 'ledger-redis': { ...options.redisSettings } },
    }));

    const launch = async (name: string, host: Host, port: number): Promise<FleetInstance> => {
      const workers = options.workers > 1 ? ['--workers', String(options.workers)] : [];
      const args = [...TSX_NODE_ARGS, MAIN, 'start', '--config', configFile, '--host', host.address, '--port', String(port), '--log-level', 'warn', ...store.startFlags, ...workers];
      // A primary and its workers compile the sources with tsx at start: minutes on a machine as busy as CI's.
      const running = await startHostProcess(host, process.execPath, args, GATEWAY_READY, { env: { ...operatorEnv, TOLLGATE_DATA_DIR: join(dir, name) }, timeoutMs: 240_000 });
      return { name, host, port, process: running };
    };
    const instances = await Promise.all(names.map(async (name) => {
      const host = network.host(name);
      return launch(name, host, await host.port());
    }));
    cleanups.push(() => Promise.all(instances.map((i) => i.process.stop())));

    const books = await startHostProcess(services, process.execPath, [...TSX_NODE_ARGS, BOOKS], /READY/, {
      stdin: 'pipe',
      env: { ...operatorEnv, TOLLGATE_FLEET_REDIS: JSON.stringify(store.settings) },
    });
    cleanups.push(() => books.killGroup());

    const balancer = await startHaproxy(network.host('balancer'), {
      servers: instances.map((i) => ({ name: i.name, address: i.host.address, port: i.port })),
    });
    cleanups.push(() => balancer.stop());
    await balancer.waitUp(names);

    return {
      network,
      store,
      balancer,
      instances,
      async restart(instance) {
        await instance.process.killGroup();
        const next = await launch(instance.name, instance.host, instance.port);
        instances[instances.indexOf(instance)] = next;
        await balancer.waitUp([instance.name]);
        return next;
      },
      books: (ids, method) => readBooks(books, { ids, method }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Asks the books reader one question (one line out, one line back). */
async function readBooks(reader: HostProcess, query: BooksQuery): Promise<Record<string, KeyBooks>> {
  const from = reader.output().length;
  reader.child.stdin!.write(`${JSON.stringify(query)}\n`);
  let line = '';
  await until('the books reader to answer', () => {
    if (reader.exited()) throw new Error(`the books reader exited: ${reader.output()}`);
    // Only the reader's answer lines: a warning on stderr may land in the same output.
    const answer = /^BOOKS (.*)$/m.exec(reader.output().slice(from));
    if (answer === null) return false;
    line = answer[1]!;
    return true;
  }, 30_000, 10);
  return JSON.parse(line) as Record<string, KeyBooks>;
}
