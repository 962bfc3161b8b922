import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { workerCount } from 'tollgate/plugins/workers';
import { createGateway, ConfigError, PluginError, type GatewayConfig, type TollgatePlugin } from 'tollgate';
import type { CliOptions } from './cli.js';
import { loadCliConfig, reportLoadFailure } from './cli-config.js';
import { configFileOf } from './config-file.js';
import { startedByNpm, watchParent } from './parent-watch.js';
import { bundledPlugins, MissingPackagesError } from './bundled-plugins.js';
import { DEMO_API_SECRET, DEMO_X402_API_KEY } from './default-config.js';
import { portProblem } from './port-check.js';
import { DATA_DIR_ENV } from './store-flags.js';

/** What the banner shows of the devnet plugin's seed (the devnet package is not a dependency: only its shape is known here). */
interface SeededDevnet {
  getSeed(id?: string): {
    readonly contract: { readonly address: string };
    readonly transactions: { readonly eip1559Transfer: { readonly hash: string; readonly blockHash: string } };
    readonly revert: { readonly call: string };
    /** With `stablecoin: true`: the test stablecoin and its funded payer. */
    readonly stablecoin?: { readonly address: string; readonly payer: { readonly privateKey: string } } | undefined;
  };
}

/**
 * The seeded values README's calls use: the contract, a transaction and its block, and a call that
 * reverts; first, when eth-devnet has the test stablecoin, the private key of its funded x402 payer.
 */
export function seedLines(plugins: readonly TollgatePlugin[]): string[] {
  const devnet = plugins.find((p) => p.name === 'devnet') as (TollgatePlugin & Partial<SeededDevnet>) | undefined;
  if (devnet?.getSeed === undefined) return [];
  try {
    const seed = devnet.getSeed('anvil');
    const transfer = seed.transactions.eip1559Transfer;
    const payer = seed.stablecoin?.payer.privateKey;
    return [
      ...(payer === undefined ? [] : [`  x402 payer: ${payer}   (devnet only: holds tUSD on eth-devnet to pay with)`]),
      '',
      '  Seeded on eth-devnet:',
      `    contract          ${seed.contract.address}`,
      `    transaction       ${transfer.hash}`,
      `    its block         ${transfer.blockHash}`,
      `    call that reverts ${seed.revert.call}   (eth_call data for the contract)`,
    ];
  } catch {
    return [];
  }
}

/**
 * The lines printed once the gateway listens: where each network is served, and the operator's endpoints.
 * `seed` is what the demo shows of the embedded nodes' seed (read from the devnet plugin by default).
 */
export async function banner(gateway: Awaited<ReturnType<typeof createGateway>>, config: GatewayConfig, plugins: readonly TollgatePlugin[], port: number, demo: boolean, seed: readonly string[] = seedLines(plugins)): Promise<string> {
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const lines = [`Tollgate: Listening on http://${host}:${port}`, ''];
  for (const network of gateway.networks.all) {
    const base = network.config.base?.path ?? (network.config.base?.hosts === undefined ? `/${network.name}` : '');
    const root = `${host}:${port}${base === '/' ? '' : base}`;
    if (network.config.families.includes('ipfs')) {
      lines.push(`  ${network.name.padEnd(18)} http://${root}/api/v0/<command>   (ipfs: curl -u <API_KEY>:<API_SECRET> -X POST)`);
      continue;
    }
    lines.push(`  ${network.name.padEnd(18)} http://${root}/v3/<API_KEY>   (${network.config.families.join(', ')})`);
    // A family may offer its methods over some transports only (Solana's: HTTP); show WebSocket where it serves something.
    const overWs = [...network.methods.values()].some((m) => m.definition.transports === undefined || m.definition.transports.includes('ws'));
    if (overWs) lines.push(`  ${''.padEnd(18)} ws://${root}/ws/v3/<API_KEY>`);
  }
  if (demo) {
    const x402 = config.keys.find((key) => key.key === DEMO_X402_API_KEY);
    lines.push('', `  API key: ${config.keys[0]!.key}`, `  API secret: ${DEMO_API_SECRET}   (the file-storage API's basic-auth password)`);
    if (x402 !== undefined) lines.push(`  x402 key: ${x402.key}   (plan ${x402.plan}: no credits until it buys a bundle with x402, see docs/payments.md)`);
    lines.push(...seed);
  }
  const { operatorBanner } = await import('./operator-plugins.js');
  // With server.adminListen, the operator's routes are on that listener, not on the public port.
  const admin = gateway.adminServer?.address() as AddressInfo | null | undefined;
  const adminHost = config.server.adminListen?.host ?? '';
  const operatorOrigin = admin == null ? `http://${host}:${port}` : `http://${adminHost.includes(':') ? `[${adminHost}]` : adminHost}:${admin.port}`;
  lines.push('', ...await operatorBanner(config, plugins, operatorOrigin));
  lines.push('', 'Press Ctrl+C to stop.', '');
  return lines.join('\n');
}

/**
 * `tollgate start` and `tollgate demo`: loads the configuration, checks the port and the packages the
 * plugins need before any embedded node starts, assembles the gateway, listens and prints the banner.
 * Resolves with 0 once serving (the open server keeps the process alive until SIGINT or SIGTERM), or
 * with the exit code of a problem, printed as one line.
 */
export async function serve(cli: CliOptions, mode: 'start' | 'demo'): Promise<number> {
  // A worker of `--workers n` serves what its primary sends: the primary read the flags and the file.
  if (cluster.isWorker) return (await import('./serve-worker.js')).serveWorker();
  const err = (text: string): void => void process.stderr.write(text);
  const extra = cli.command?.args ?? [];
  if (extra.length > 0) {
    err(`tollgate ${mode}: unexpected argument "${extra[0]}" (see tollgate --help)\n`);
    return 2;
  }
  if (mode === 'demo' && cli.config !== undefined) {
    err('tollgate demo serves the built-in demo configuration; to serve a file: tollgate start --config <file>\n');
    return 2;
  }
  // `demo` serves the built-in configuration even where TOLLGATE_CONFIG names a file; `start` reads it.
  const file = mode === 'demo' ? undefined : configFileOf(cli, process.env);
  let config: GatewayConfig;
  try {
    config = await loadCliConfig(cli, process.env, mode === 'demo');
  } catch (error) {
    err(reportLoadFailure(error, file));
    return 1;
  }
  // --data-dir holds the embedded file store's blocks too; the devnet reads that folder from the environment.
  if (cli.dataDir !== undefined) process.env[DATA_DIR_ENV] = cli.dataDir;

  const adminListen = config.server.adminListen;
  const busy = await portProblem(config.server.host, config.server.port)
    ?? (adminListen === undefined ? undefined : await portProblem(adminListen.host, adminListen.port, '--admin-port'));
  if (busy !== undefined) {
    err(`${busy}\n`);
    return 1;
  }
  let plugins: TollgatePlugin[];
  try {
    plugins = await bundledPlugins(config);
  } catch (error) {
    if (!(error instanceof MissingPackagesError)) throw error;
    err(`${error.message}\n`);
    return 1;
  }
  const workers = workerCount(config.server.workers);
  if (workers > 1) return (await import('./serve-workers.js')).serveWorkers(config, plugins, workers, file === undefined, file === undefined ? undefined : () => loadCliConfig(cli, process.env));
  const { gatewayLogger } = await import('tollgate/plugins/metrics');
  let gateway: Awaited<ReturnType<typeof createGateway>>;
  try {
    gateway = await createGateway({
      config,
      plugins,
      logger: gatewayLogger(config.log.level),
      configFile: file,
      // A reload reads the file with the command's flags on top, as the start did.
      ...(file === undefined ? {} : { reloadVia: async () => gateway.reload(await loadCliConfig(cli, process.env)) }),
    });
  } catch (error) {
    err(`${error instanceof PluginError || error instanceof ConfigError ? error.message : String((error as Error).stack ?? error)}\n`);
    return 1;
  }
  const server = await gateway.listen();
  const { port } = server.address() as AddressInfo;
  process.stdout.write(await banner(gateway, config, plugins, port, file === undefined));

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    gateway.logger.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      (error: unknown) => {
        gateway.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // npm (npx tollgate start) exits on SIGTERM without passing it on: drain when it is gone, as on SIGTERM.
  if (startedByNpm()) watchParent(() => stop('parent exited'));
  // SIGHUP re-reads the config file for new calls; a bad file is refused whole and logged with config check's words.
  process.on('SIGHUP', () => {
    gateway.reload().then(
      () => undefined,
      (error: unknown) => gateway.logger.error({ problems: error instanceof ConfigError ? error.problems : undefined, err: error instanceof ConfigError ? undefined : error }, `reload refused: ${error instanceof ConfigError ? error.message : String(error)}`),
    );
  });
  return 0;
}
