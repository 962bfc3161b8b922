/**
 * Assembles the solana network family: the method table, the address decode check, and the
 * transports the methods are offered on.
 *
 * @module
 */
import type { MethodDefinition, NetworkFamily } from '../../core/plugin-api.js';
import { SOLANA_METHODS } from './methods.js';
import { SOLANA_SUBSCRIPTION_DEFINITIONS, solanaSubscriptions } from './subscriptions/index.js';

/** The head a probe reports as a slot (a JSON number); `getHealth`'s "ok" carries none. */
function slotHead(result: unknown): number | undefined {
  return typeof result === 'number' && Number.isSafeInteger(result) && result >= 0 ? result : undefined;
}
import { pubkeyParamCheck } from './pubkey.js';

/** The name of the family, as networks reference it in the config (`families: [solana]`). */
export const SOLANA_FAMILY_NAME = 'solana';

/**
 * The transports the solana methods are offered on by default: HTTP only, as the spec shows them, and
 * as a Solana node offers them (its WebSocket port serves subscriptions only). See the README.
 */
export const SOLANA_DEFAULT_TRANSPORTS: readonly string[] = Object.freeze(['http']);

/** Options of `createSolanaFamily` and `solanaFamily()`. */
export interface SolanaFamilyOptions {
  /**
   * The transports that offer the family's methods: transport names (default `['http']`), or `'all'`
   * to offer them on every transport the gateway has (JSON-RPC over the gateway's WebSocket too).
   */
  readonly transports?: readonly string[] | 'all';
}

/** The commitment a call asks for in its config object (`params[0]`), by default `finalized` as on a node. */
function commitmentOf(params: unknown): string {
  const config = Array.isArray(params) ? params[0] : undefined;
  const commitment = (config as { commitment?: unknown } | null | undefined)?.commitment;
  return typeof commitment === 'string' ? commitment : 'finalized';
}

/**
 * The head a `getSlot` answer shows, scoped by commitment level (a `finalized` slot is rightly behind a
 * `processed` one; each level only goes forward).
 */
function slotAnswer(result: unknown, params: unknown): { head: number; scope: string } | undefined {
  const head = slotHead(result);
  return head === undefined ? undefined : { head, scope: `slot:${commitmentOf(params)}` };
}

/** The hooks each method gets, by method name. */
const HOOKS: Readonly<Record<string, Partial<MethodDefinition>>> = {
  getAccountInfo: { checkParams: pubkeyParamCheck(0, 'address') },
  getSlot: { answerHead: slotAnswer },
};

/**
 * The solana family: every method of `SOLANA_METHODS`, offered on `options.transports` (HTTP only
 * by default), `getAccountInfo`'s address decoded before dispatch; its health probe is `getHealth`.
 */
export function createSolanaFamily(options: SolanaFamilyOptions = {}): NetworkFamily {
  const transports = options.transports ?? SOLANA_DEFAULT_TRANSPORTS;
  const offeredOn: Partial<MethodDefinition> = transports === 'all' ? {} : { transports: [...transports] };
  return {
    name: SOLANA_FAMILY_NAME,
    // The subscriptions keep their own transports: they need a connection whatever the calls are offered on.
    methods: [...SOLANA_METHODS.map((method) => ({ ...method, ...offeredOn, ...HOOKS[method.name] })), ...SOLANA_SUBSCRIPTION_DEFINITIONS],
    subscriptions: solanaSubscriptions(),
    probe: { method: 'getHealth', params: [], head: slotHead },
  };
}
