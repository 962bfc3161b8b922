import type { GatewayConfigInput } from 'tollgate';

/** The API key of the default configuration, printed at start. Local use only: change it for anything shared. */
export const DEMO_API_KEY = 'tollgate-demo-key-0001';

/** The demo key's secret: with the key, the HTTP basic credentials of the file-storage API (`curl -u KEY:SECRET`). */
export const DEMO_API_SECRET = 'tollgate-demo-secret-0001';

/** A second demo key, on the Core plan: its calls never go to a partner provider. */
export const DEMO_CORE_API_KEY = 'tollgate-demo-core-0001';

/**
 * The configuration `npm start` uses without `--config`: an Ethereum-like, a Polygon-like and a Solana
 * network on embedded, offline upstreams, a failover network (two primaries and a partner provider), a
 * demo key on the Growth plan (which may fail over) and one on the Core plan (which may not).
 *
 * On `eth-failover` every upstream is an Anvil of its own, seeded alike: the same heights, contract
 * address and transaction hashes on all three, but block hashes differ (each chain has its own
 * timestamps). Real nodes of one network serve one chain; here the failover mechanics are what is shown.
 */
export const defaultConfig: GatewayConfigInput = {
  server: { host: '127.0.0.1', port: 8545 },
  log: { level: 'info' },
  // Keys, balances and usage survive restarts in this SQLite file (--data-dir or TOLLGATE_DATA_DIR moves it).
  plugins: { 'ledger-sqlite': { path: '.data/tollgate.db' } },
  keys: [
    { key: DEMO_API_KEY, id: 'demo', plan: 'growth', secret: DEMO_API_SECRET },
    { key: DEMO_CORE_API_KEY, id: 'demo-core', plan: 'core' },
  ],
  networks: [
    { name: 'eth-devnet', families: ['evm'], upstreams: [{ name: 'anvil', embedded: 'anvil' }] },
    // A chain that mines a block every 2 s whether or not anything is sent, for subscriptions (eth_subscribe) to watch.
    { name: 'eth-live', families: ['evm'], upstreams: [{ name: 'anvil-live', embedded: 'anvil#live' }], options: { blockTime: 2, seed: false } },
    {
      name: 'eth-failover',
      families: ['evm'],
      upstreams: [
        { name: 'anvil-a', embedded: 'anvil#a' },
        { name: 'anvil-b', embedded: 'anvil#b' },
        { name: 'anvil-partner', embedded: 'anvil#partner', role: 'partner' },
      ],
    },
    { name: 'polygon-devnet', families: ['evm', 'polygon'], upstreams: [{ name: 'bor', embedded: 'bor' }] },
    // The embedded node is a devnet: its faucet answers requestAirdrop.
    { name: 'solana-devnet', families: ['solana'], upstreams: [{ name: 'litesvm', embedded: 'litesvm' }], options: { solana: { airdrop: true } } },
    // The file-storage API (kubo's HTTP RPC at /ipfs-devnet/api/v0/<command>) on an embedded IPFS node.
    { name: 'ipfs-devnet', families: ['ipfs'], upstreams: [{ name: 'helia', embedded: 'helia' }] },
  ],
};
