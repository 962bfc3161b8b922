/**
 * A demo gateway with this package's plugin: an EVM devnet (an embedded Anvil chain, seeded with a
 * contract) served over HTTP and WebSocket with the `evm` and `geth-extras` families, an open demo key,
 * and a second key restricted by allowlists of the bundled security plugin.
 *
 * `npm start` (PORT, default 3000; 0 picks a free port). Set TOLLGATE_ADMIN_TOKEN (16+ characters) to
 * turn on the admin API, which shows each key's credit balance.
 *
 * @module
 */
import type { AddressInfo } from 'node:net';
import { createGateway, type GatewayConfigInput } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { wsTransport } from 'tollgate/plugins/ws';
import { evmFamily } from 'tollgate/plugins/evm';
import { devnet } from '@tollgate/devnet';
import { admin } from 'tollgate/plugins/admin';
import { security, type SecuritySettings } from 'tollgate/plugins/security';
import { gethExtrasFamily } from './index.js';

/** The open demo key: no allowlist entry, so every method of the network is allowed. */
const OPEN_KEY = 'tollgate-demo-key-0001';
/** The restricted demo key (id `dapp`): the allowlists below. */
const DAPP_KEY = 'tollgate-dapp-key-0002';
/** The devnet's seed contract: the first contract the first dev account deploys on a fresh Anvil. */
const SEED_CONTRACT_ADDRESS = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
/** The devnet's second dev account. */
const SECOND_ACCOUNT = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** The allowlists of the `dapp` key, as a config file's `plugins.security` section would hold them. */
const DEMO_ALLOWLISTS: SecuritySettings = {
  keys: {
    dapp: {
      methods: [
        'eth_blockNumber', 'eth_chainId', 'eth_call', 'eth_estimateGas', 'eth_getLogs', 'eth_getBalance',
        'eth_getCode', 'eth_getStorageAt', 'eth_getTransactionCount', 'txpool_status', 'web3_sha3',
      ],
      origins: ['https://*.example.com', '*.example.org', 'http://localhost:3000'],
      userAgents: ['MyDapp/', 'curl/'],
      addresses: [SEED_CONTRACT_ADDRESS, SECOND_ACCOUNT],
    },
  },
};

function portFromEnv(value: string | undefined): number {
  if (value === undefined || value === '') return 3000;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    process.stderr.write(`PORT: "${value}" is not a port number\n`);
    process.exit(2);
  }
  return port;
}

const config: GatewayConfigInput = {
  server: { host: '127.0.0.1', port: portFromEnv(process.env.PORT) },
  log: { level: process.env.LOG_LEVEL ?? 'warn' },
  keys: [
    { key: OPEN_KEY, id: 'demo', plan: 'growth' },
    { key: DAPP_KEY, id: 'dapp', plan: 'growth' },
  ],
  networks: [{ name: 'eth-devnet', families: ['evm', 'geth-extras'], upstreams: [{ embedded: 'anvil' }] }],
  plugins: { security: { ...DEMO_ALLOWLISTS } },
};

const gateway = await createGateway({
  config,
  plugins: [admin(), httpTransport(), wsTransport(), evmFamily(), gethExtrasFamily(), security(), devnet()],
});
const server = await gateway.listen();
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
process.stdout.write(
  [
    `Listening on ${origin}`,
    '',
    `  open key:        ${origin}/eth-devnet/v3/${OPEN_KEY}`,
    `  allowlisted key: ${origin}/eth-devnet/v3/${DAPP_KEY}   (send Origin: https://app.example.com)`,
    `  WebSocket:       ${origin.replace('http:', 'ws:')}/eth-devnet/ws/v3/<API_KEY>`,
    '',
    'Press Ctrl+C to stop.',
    '',
  ].join('\n'),
);

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  gateway.close().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
