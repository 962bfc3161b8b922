/**
 * The methods the embedded Solana node answers, as an agave node answers them: Solana's 52 HTTP
 * methods, by group.
 *
 * @module
 */
import { ACCOUNT_METHODS } from './methods/accounts.js';
import { BLOCK_METHODS } from './methods/blocks.js';
import type { Method } from './methods/common.js';
import { ECONOMICS_METHODS } from './methods/economics.js';
import { HISTORY_METHODS } from './methods/history.js';
import { SEND_METHODS } from './methods/send.js';
import { TOKEN_METHODS } from './methods/tokens.js';
import { VALIDATOR_METHODS } from './methods/validator.js';

export type { Method, MethodContext } from './methods/common.js';

/** Every method the node answers, by name; others get `-32601 Method not found`. */
export const SOLANA_NODE_METHODS: Readonly<Record<string, Method>> = Object.freeze({
  ...ACCOUNT_METHODS,
  ...BLOCK_METHODS,
  ...ECONOMICS_METHODS,
  ...HISTORY_METHODS,
  ...SEND_METHODS,
  ...TOKEN_METHODS,
  ...VALIDATOR_METHODS,
});
