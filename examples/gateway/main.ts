import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { createGateway, loadConfigFile, resolveConfig, ConfigError, PluginError, type GatewayConfig } from 'tollgate';
import { bundledPlugins } from './bundled-plugins.js';
import { defaultConfig, DEMO_API_SECRET } from './default-config.js';
import { HELP, parseCli, portFromEnv } from './cli.js';
import { applyStoreFlags, operatorBanner } from './operator-plugins.js';
import { runCommand } from './commands.js';
import { gatewayLogger } from 'tollgate/plugins/metrics';

async function main(): Promise<void> {
  let cli;
  try {
    cli = parseCli(process.argv.slice(2));
    portFromEnv(process.env.PORT);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${HELP}`);
    process.exit(2);
  }
  if (cli.help) {
    process.stdout.write(HELP);
    return;
  }

  let config: GatewayConfig;
  try {
    config = cli.config === undefined ? resolveConfig(defaultConfig) : await loadConfigFile(cli.config);
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : `cannot read ${cli.config}: ${(error as Error).message}`}\n`);
    process.exit(1);
  }
  const listenPort = cli.port ?? portFromEnv(process.env.PORT);
  if (listenPort !== undefined) config.server.port = listenPort;
  if (cli.host !== undefined) config.server.host = cli.host;
  if (cli.logLevel !== undefined) config.log.level = cli.logLevel;
  applyStoreFlags(config, cli);
  if (cli.command !== undefined) {
    process.exitCode = await runCommand(cli, config);
    return;
  }

  const plugins = bundledPlugins(config);
  let gateway;
  try {
    gateway = await createGateway({ config, plugins, logger: gatewayLogger(config.log.level) });
  } catch (error) {
    process.stderr.write(`${error instanceof PluginError || error instanceof ConfigError ? error.message : String((error as Error).stack ?? error)}\n`);
    process.exit(1);
  }
  const server = await gateway.listen();
  const { port } = server.address() as AddressInfo;
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
  if (cli.config === undefined) lines.push('', `  API key: ${config.keys[0]!.key}`);
  if (cli.config === undefined) lines.push(`  API secret: ${DEMO_API_SECRET}   (the file-storage API's basic-auth password)`);
  lines.push('', ...operatorBanner(config, plugins, `http://${host}:${port}`));
  lines.push('', 'Press Ctrl+C to stop.', '');
  process.stdout.write(lines.join('\n'));

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
}

await main();
