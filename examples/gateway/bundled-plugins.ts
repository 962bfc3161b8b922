import type { TollgatePlugin } from '../../core/index.js';
import { httpTransport } from '../../plugins/http/index.js';
import { wsTransport } from '../../plugins/ws/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { polygonFamily } from '../../plugins/polygon/index.js';
import { solanaFamily } from '../../plugins/solana/index.js';
import { ipfs } from '../../plugins/ipfs/index.js';
import { devnet } from '../../plugins/devnet/index.js';

/** Every plugin the bundled gateway loads; the config decides which networks use which family. */
export function bundledPlugins(): TollgatePlugin[] {
  return [httpTransport(), wsTransport(), evmFamily(), polygonFamily(), solanaFamily(), ipfs(), devnet()];
}
