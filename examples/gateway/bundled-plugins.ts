import type { GatewayConfig, GatewayConfigInput, TollgatePlugin } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { wsTransport } from 'tollgate/plugins/ws';
import { evmFamily } from 'tollgate/plugins/evm';
import { polygonFamily } from 'tollgate/plugins/polygon';
import { solanaFamily } from 'tollgate/plugins/solana';
import { ipfs } from 'tollgate/plugins/ipfs';
import { devnet } from 'tollgate/plugins/devnet';
import { operatorPlugins } from './operator-plugins.js';

/**
 * Every plugin the bundled gateway loads; the config decides which networks use which family. Given the
 * config, the operator's plugins come first (operator-plugins.ts): the store it selects (SQLite by
 * default, Redis with `plugins.ledger-redis`), the admin API, metrics and access logs. Without a config,
 * keys, balances and usage stay in memory.
 */
export function bundledPlugins(config?: GatewayConfigInput | GatewayConfig): TollgatePlugin[] {
  return [...(config === undefined ? [] : operatorPlugins(config)), httpTransport(), wsTransport(), evmFamily(), polygonFamily(), solanaFamily(), ipfs(), devnet()];
}
