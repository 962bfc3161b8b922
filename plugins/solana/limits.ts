/**
 * Per-call limits of the Solana methods a schema cannot bound: the slot range of `getBlocks`, the size
 * of a `getProgramAccounts` answer, and the airdrop faucet a network must turn on.
 *
 * @module
 */
import { Errors, GatewayError } from '../../core/plugin-api.js';
import type { AnswerView, LimitsInput } from '../../core/family-api.js';
import { MAX_BLOCKS_RANGE } from './methods.js';
import { solanaNetworkSettings } from './network-settings.js';

/**
 * The `checkParams` of `getBlocks`: an end slot more than 500,000 slots after the start is refused with
 * `-32602`, before anything is charged, in the words agave uses (`Slot range too large; max 500000`).
 */
export function blocksRangeCheck(params: unknown): string | undefined {
  if (!Array.isArray(params)) return undefined;
  const [start, end] = params as unknown[];
  if (typeof start !== 'number' || typeof end !== 'number') return undefined;
  if (end - start > MAX_BLOCKS_RANGE) return `invalid argument 1 (endSlot): Slot range too large; max ${MAX_BLOCKS_RANGE}`;
  return undefined;
}

/**
 * The `checkResult` of `getProgramAccounts`: an answer of more than `maxResults` accounts (a bare list, or
 * `{context, value}` with `withContext`) is replaced by `-32005`, uncharged: the caller narrows the query
 * with filters (`dataSize`, `memcmp`). The accounts are counted by scanning the answer's bytes, not parsed.
 */
export function programAccountsCap(maxResults: number): (answer: AnswerView) => void {
  return (answer) => {
    if (answer.kind !== 'result') return;
    const accounts = answer.length('result') ?? answer.length('result', 'value');
    if (accounts !== undefined && accounts > maxResults) {
      throw new GatewayError(Errors.LIMIT_EXCEEDED, {
        message: `query returned more than ${maxResults} accounts; narrow it with filters (dataSize, memcmp)`,
      });
    }
  };
}

/**
 * The `limits` of `requestAirdrop`: refused with `METHOD_NOT_SUPPORTED` (uncharged) unless the network
 * turns its faucet on (`options.solana.airdrop: true`); a mainnet node has none.
 */
export function airdropGate({ network }: LimitsInput): void {
  if (!solanaNetworkSettings(network.options, `networks[${network.name}].options.solana`).airdrop) {
    throw new GatewayError(Errors.METHOD_NOT_SUPPORTED, {
      message: `requestAirdrop is not served on network ${network.name}: its operator has not enabled airdrops (options.solana.airdrop)`,
    });
  }
}
