import type { GatewayConfigInput } from '../../core/index.js';

/** The API key of the default configuration, printed at start. Local use only: change it for anything shared. */
export const DEMO_API_KEY = 'tollgate-demo-key-0001';

/**
 * The configuration `npm start` uses without `--config`: an Ethereum-like, a Polygon-like and a Solana
 * network on embedded, offline upstreams, and one demo key on the Growth plan.
 */
export const defaultConfig: GatewayConfigInput = {
  server: { host: '127.0.0.1', port: 8545 },
  log: { level: 'info' },
  keys: [{ key: DEMO_API_KEY, id: 'demo', plan: 'growth' }],
  networks: [
    { name: 'eth-devnet', families: ['evm'], upstreams: [{ name: 'anvil', embedded: 'anvil' }] },
    { name: 'polygon-devnet', families: ['evm', 'polygon'], upstreams: [{ name: 'bor', embedded: 'bor' }] },
    { name: 'solana-devnet', families: ['solana'], upstreams: [{ name: 'litesvm', embedded: 'litesvm' }] },
  ],
};
