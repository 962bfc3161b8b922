import { pinEmbeddedUpstreams } from 'tollgate/upstream';
import { PluginError, ConfigError, type GatewayConfig, type TollgatePlugin } from 'tollgate';
import { superviseWorkers } from 'tollgate/plugins/workers';
import { seedLines } from './serve.js';
import { groupReload, RELOAD_GROUP, type GroupReloadAnswer } from './reload-group.js';
import { LEDGER_SQLITE, storeKind } from './store-flags.js';

/** What the primary hands each worker: the configuration with the embedded nodes pinned, and the banner's parts. */
export interface WorkerAssignment {
  /** The configuration to serve; embedded upstreams already run in the primary and are named by URL. */
  readonly config: GatewayConfig;
  /** Whether this is the demo (the banner shows the demo key). */
  readonly demo: boolean;
  /** The demo's seed lines, read from the devnet plugin in the primary. */
  readonly seed: readonly string[];
}

/** Why a config cannot run on several workers, in one line, or undefined when it can. */
export function workersProblem(config: GatewayConfig, workers: number): string | undefined {
  const sqlitePath = config.plugins[LEDGER_SQLITE]?.path;
  if (storeKind(config) === 'sqlite' && sqlitePath === ':memory:') {
    return `tollgate start: ${workers} workers cannot share a store kept in memory (each would hold its own keys, balances and usage, and a key could spend its credits once per worker); use an SQLite file (--data-dir <dir>) or Redis (--redis <url>)`;
  }
  return undefined;
}

/**
 * `tollgate start --workers n` in the primary process: refuses a store the workers cannot share, starts
 * the embedded nodes once (the workers reach them by URL), forks the workers, prints one banner once all
 * serve, and exits with the group: 0 after a clean drain on SIGTERM or SIGINT, 1 when the drain deadline
 * or a second signal cut it short.
 */
export async function serveWorkers(config: GatewayConfig, plugins: readonly TollgatePlugin[], workers: number, demo: boolean, readConfig?: () => Promise<GatewayConfig>): Promise<number> {
  const problem = workersProblem(config, workers);
  if (problem !== undefined) {
    process.stderr.write(`${problem}\n`);
    return 1;
  }
  const { gatewayLogger, groupMetrics } = await import('tollgate/plugins/metrics');
  const logger = gatewayLogger(config.log.level).child({ role: 'primary' });
  // As written (pinning replaces the embedded upstreams by the URLs of the nodes it starts): a reload compares with it.
  const atStart = structuredClone(config);
  let pinned: Awaited<ReturnType<typeof pinEmbeddedUpstreams>>;
  try {
    pinned = await pinEmbeddedUpstreams(config, plugins);
  } catch (error) {
    process.stderr.write(`${error instanceof PluginError || error instanceof ConfigError ? error.message : String((error as Error).stack ?? error)}\n`);
    return 1;
  }
  const assignment: WorkerAssignment = { config: pinned.config, demo, seed: seedLines(plugins) };
  const readAndReload = readConfig === undefined
    ? () => Promise.reject(new ConfigError(['the gateway was not started from a file: there is nothing to reload']))
    : groupReload(readConfig, atStart, pinned.config, () => group);
  const reload = (): Promise<GatewayConfig> => readAndReload().then(
    (next) => {
      logger.info({ networks: next.networks.map((n) => n.name) }, 'configuration reloaded on every worker');
      return next;
    },
    (error: unknown) => {
      logger.error({ problems: error instanceof ConfigError ? error.problems : undefined }, `reload refused: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    },
  );
  const group = superviseWorkers({
    workers,
    data: assignment,
    drainTimeoutMs: config.server.drainTimeoutMs,
    logger,
    answers: {
      metrics: groupMetrics(),
      // A reload asked of one worker (the admin API, a SIGHUP sent to it) reaches the whole group.
      [RELOAD_GROUP]: () => reload().then(
        (next): GroupReloadAnswer => ({ config: next }),
        (error: unknown): GroupReloadAnswer => ({ problems: error instanceof ConfigError ? error.problems : [String((error as Error)?.message ?? error)] }),
      ),
    },
  });
  // SIGHUP re-reads the configuration for every worker (without a handler it would end the primary).
  process.on('SIGHUP', () => void reload().catch(() => undefined));
  void group.stopped.then(async (code) => {
    await pinned.stop();
    logger.info({ code }, 'stopped');
    process.exit(code);
  });
  try {
    await group.serving;
  } catch {
    // The group stops itself and exits with 1; a worker printed why.
    return 1;
  }
  // The banner is a worker's (it knows its plugins' lines). On a machine so busy that no worker answers in
  // time, the group still says where it listens: that line is what operators and scripts wait for.
  const [banner] = await group.askWorkers('banner', undefined, 30_000);
  const workersLine = `  Workers:   ${workers} processes (node:cluster, round robin), supervised by pid ${process.pid}\n`;
  const text = typeof banner === 'string' ? banner : `Tollgate: Listening on http://${config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host}:${config.server.port}\n\nPress Ctrl+C to stop.\n`;
  process.stdout.write(text.replace(/\nPress Ctrl\+C/, `${workersLine}\nPress Ctrl+C`));
  return 0;
}
