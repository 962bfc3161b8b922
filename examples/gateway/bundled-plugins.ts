import type { GatewayConfig, GatewayConfigInput, TollgatePlugin } from '../../core/index.js';
import { httpTransport } from '../../plugins/http/index.js';
import { wsTransport } from '../../plugins/ws/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { polygonFamily } from '../../plugins/polygon/index.js';
import { solanaFamily } from '../../plugins/solana/index.js';
import { ipfs } from '../../plugins/ipfs/index.js';
import { devnet } from '../../plugins/devnet/index.js';
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
