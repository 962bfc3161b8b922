import type { GatewayConfigInput } from 'tollgate';

/** The API key of the default configuration, printed at start. Local use only: change it for anything shared. */
export const DEMO_API_KEY = 'tollgate-demo-key-0001';

/** The demo key's secret: with the key, the HTTP basic credentials of the file-storage API (`curl -u KEY:SECRET`). */
export const DEMO_API_SECRET = 'tollgate-demo-secret-0001';

/** A second demo key, on the Core plan: its calls never go to a partner provider. */
export const DEMO_CORE_API_KEY = 'tollgate-demo-core-0001';

/** A demo key on the x402 plan: no daily credits, so its calls run on credits bought with x402 payments. */
export const DEMO_X402_API_KEY = 'tollgate-demo-x402-0001';

/** The demo's plan whose credits are bought with x402: no daily allowance, bundles for sale. */
export const DEMO_X402_PLAN = 'x402';

/**
 * The test stablecoin (tUSD, EIP-3009) the devnet deploys on `eth-devnet` with `stablecoin: true`: the
 * same address on every run, since the devnet's first account deploys it at the same nonce.
 */
export const DEMO_STABLECOIN = '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9';

/** `eth-devnet`'s chain id (Anvil's default), as the x402 network `eip155:31337`. */
export const DEMO_X402_NETWORK = 'eip155:31337';

/**
 * The demo's settlement key: Anvil's dev account 9 (`0xa0Ee7A142d267C1f36714E4a8F75612F20a79720`), which
 * holds devnet ether for the settlements' gas. A public key: devnet only.
 */
export const DEMO_SETTLEMENT_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6';

/** Where the demo's x402 payments go: Anvil's dev account 8. */
export const DEMO_PAY_TO = '0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f';

/** The demo's bundle: 10,000 credits (125 eth_blockNumber calls) for 0.01 tUSD. */
export const DEMO_BUNDLE = { credits: 10_000, price: '10000' } as const;

/** The secret the demo derives wallet customers' keys from. Local use only: give your own from the environment. */
export const DEMO_WALLET_KEY_SECRET = 'tollgate-demo-wallet-key-secret-0001';

/**
 * The configuration `npm start` uses without `--config`: an Ethereum-like, a Polygon-like and a Solana
 * network on embedded, offline upstreams, a failover network (two primaries and a partner provider), a
 * demo key on the Growth plan (which may fail over), one on the Core plan (which may not), and one on the
 * x402 plan, whose credits are bought with the devnet's stablecoin.
 *
 * On `eth-failover` every upstream is an Anvil of its own, seeded alike: the same heights, contract
 * address and transaction hashes on all three, but block hashes differ (each chain has its own
 * timestamps). Real nodes of one network serve one chain; here the failover mechanics are what is shown.
 */
export const defaultConfig: GatewayConfigInput = {
  server: { host: '127.0.0.1', port: 8545 },
  log: { level: 'info' },
  plugins: {
    // Keys, balances and usage survive restarts in this SQLite file (--data-dir or TOLLGATE_DATA_DIR moves it).
    'ledger-sqlite': { path: '.data/tollgate.db' },
    // x402: the x402 plan sells a bundle for eth-devnet's tUSD, settled by the gateway itself through
    // eth-devnet; a wallet without a key that pays gets one (docs/payments.md).
    payments: {
      offers: {
        [DEMO_X402_PLAN]: [{ ...DEMO_BUNDLE, asset: DEMO_STABLECOIN, network: DEMO_X402_NETWORK, payTo: DEMO_PAY_TO, name: 'Tollgate Devnet USD', version: '2' }],
      },
      facilitator: { embedded: { network: 'eth-devnet', settlementKey: DEMO_SETTLEMENT_KEY } },
      wallets: { plan: DEMO_X402_PLAN, keySecret: DEMO_WALLET_KEY_SECRET },
    },
  },
  plans: { [DEMO_X402_PLAN]: { dailyCredits: 0, creditsPerSecond: 10_000, failover: false } },
  keys: [
    { key: DEMO_API_KEY, id: 'demo', plan: 'growth', secret: DEMO_API_SECRET },
    { key: DEMO_CORE_API_KEY, id: 'demo-core', plan: 'core' },
    { key: DEMO_X402_API_KEY, id: 'demo-x402', plan: DEMO_X402_PLAN },
  ],
  networks: [
    // stablecoin: the devnet deploys tUSD and funds the demo payer (DEVNET_PAYER_KEY), for x402 payments.
    { name: 'eth-devnet', families: ['evm'], upstreams: [{ name: 'anvil', embedded: 'anvil' }], options: { stablecoin: true } },
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
