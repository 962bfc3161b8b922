/**
 * The gateway of this example: one EVM network, `eth`, on an embedded Anvil chain, keys and credits in
 * memory, and no transport plugin at all. Nothing in it listens on a port: calls reach it only through
 * `gateway.handle()`.
 */
import { createGateway, type Gateway, type GatewayConfigInput } from 'tollgate';
import { evmFamily } from 'tollgate/plugins/evm';
import { devnet } from '@tollgate/devnet';

/** The demo API key (plan `developer`). Local use only. */
export const DEMO_API_KEY = process.env.TOLLGATE_API_KEY ?? 'transport-free-demo-key-0001';

/** The loggable id of the demo key: what balances and usage are kept under. */
export const DEMO_KEY_ID = 'demo';

/** The network calls go to when an event names none. */
export const NETWORK = 'eth';

/** The configuration: no `server` section matters here, since nothing listens. */
export const config: GatewayConfigInput = {
  log: { level: 'warn' },
  keys: [{ key: DEMO_API_KEY, id: DEMO_KEY_ID, plan: 'developer' }],
  networks: [{ name: NETWORK, families: ['evm'], upstreams: [{ name: 'anvil', embedded: 'anvil' }] }],
};

/** Assembles the gateway: the evm family and the devnet plugin, which starts Anvil and stops it on close(). */
export function startGateway(): Promise<Gateway> {
  return createGateway({ config, plugins: [evmFamily(), devnet()] });
}

let starting: Promise<Gateway> | undefined;

/**
 * The gateway of this process, created on first use and reused by every later call, as a serverless
 * function keeps what it built during its cold start. A failed start is retried by the next call.
 */
export function demoGateway(): Promise<Gateway> {
  starting ??= startGateway().catch((error: unknown) => {
    starting = undefined;
    throw error;
  });
  return starting;
}

/** Closes the gateway if it was started (stops Anvil). */
export async function closeDemoGateway(): Promise<void> {
  const started = starting;
  starting = undefined;
  if (started !== undefined) await (await started).close();
}
