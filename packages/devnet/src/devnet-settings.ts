import { PluginError } from 'tollgate';
import type { AnvilOptions } from './anvil-process.js';
import { borValidators, type BorSignerInput } from './bor-validators.js';
import type { SeedOptions } from './seed-types.js';

/**
 * Per-instance settings, as `devnet({...})` takes them, as the config's `plugins.devnet` holds them, and
 * as a network's `options` carries them (each overriding the one before).
 */
export interface DevnetSettings {
  /** Chain id (default 31337 for `anvil`, 137 for `bor`). */
  readonly chainId?: number;
  /** Seconds between blocks (interval mining); default automine. */
  readonly blockTime?: number;
  /** Number of dev accounts (default 10; the seed uses 4, and wraps around with fewer). */
  readonly accounts?: number;
  /** Mnemonic of the dev accounts (default Anvil's test mnemonic). */
  readonly mnemonic?: string;
  /** Balance of each dev account, in ether (default 10000). */
  readonly balance?: number;
  /** Block gas limit (default 30,000,000). */
  readonly gasLimit?: number | bigint;
  /** Genesis base fee, in wei. */
  readonly baseFee?: number | bigint;
  /** EVM hardfork (default Anvil's latest). */
  readonly hardfork?: string;
  /** Whether to seed the chain at startup (default true). */
  readonly seed?: boolean;
  /** Extra `Ping` logs to seed, e.g. 12,000 to cross a 10,000-result eth_getLogs limit (default 0). */
  readonly bulkLogs?: number;
  /** Bor validators' signers for `bor` (default: the dev accounts). */
  readonly signers?: readonly BorSignerInput[];
  /** Further Anvil options (binary, extra args, timeouts...). Code only: not read from a config file. */
  readonly anvil?: AnvilOptions;
}

/** Settings of one instance, resolved: what to start Anvil with, whether and how to seed, the bor signers. */
export interface ResolvedDevnetSettings {
  /** Anvil's options. */
  readonly anvil: AnvilOptions;
  /** Seeding options, or `false` for none. */
  readonly seed: SeedOptions | false;
  /** Bor signers, if configured. */
  readonly signers: readonly BorSignerInput[] | undefined;
}

const KEYS = ['chainId', 'blockTime', 'accounts', 'mnemonic', 'balance', 'gasLimit', 'baseFee', 'hardfork', 'seed', 'bulkLogs', 'signers'] as const;

function check(where: string, key: string, value: unknown): unknown {
  const fail = (what: string): never => { throw new PluginError(`${where}.${key}: must be ${what}`); };
  switch (key) {
    case 'chainId': case 'accounts':
      if (!Number.isSafeInteger(value) || (value as number) <= 0) fail('a positive integer');
      return value;
    case 'bulkLogs':
      if (!Number.isSafeInteger(value) || (value as number) < 0) fail('a non-negative integer');
      return value;
    case 'blockTime': case 'balance':
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) fail('a positive number');
      return value;
    case 'gasLimit': case 'baseFee':
      if (typeof value === 'bigint' && value > 0n) return value;
      if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
      if (typeof value === 'string' && /^(0x[0-9a-fA-F]+|[0-9]+)$/.test(value)) return BigInt(value);
      return fail('a positive integer (a number, or a decimal or 0x string)');
    case 'mnemonic': case 'hardfork':
      if (typeof value !== 'string' || value.trim() === '') fail('a non-empty string');
      return value;
    case 'seed':
      if (typeof value !== 'boolean') fail('true or false');
      return value;
    case 'signers':
      if (!Array.isArray(value)) fail('an array of addresses or {signer, power?, accum?, ID?} objects');
      try {
        borValidators(value as BorSignerInput[]);
      } catch (error) {
        throw new PluginError(`${where}.${key}: ${(error as Error).message}`);
      }
      return value;
    default:
      return value;
  }
}

/** Picks and checks the devnet keys of a settings object (a config's `plugins.devnet` or a network's `options`); other keys are ignored. */
export function readDevnetSettings(where: string, source: Record<string, unknown> | undefined): DevnetSettings {
  const out: Record<string, unknown> = {};
  if (source === undefined) return out;
  for (const key of KEYS) {
    if (source[key] !== undefined) out[key] = check(where, key, source[key]);
  }
  return out as DevnetSettings;
}

const ANVIL_KEYS = ['chainId', 'blockTime', 'accounts', 'mnemonic', 'balance', 'gasLimit', 'baseFee', 'hardfork'] as const;

/**
 * Merges settings layers (later ones win) into what one instance is started with. Anvil gets
 * `--order fifo` (transactions of a seeded block stay in the order sent) and `defaultChainId` unless
 * a layer says otherwise.
 */
export function resolveDevnetSettings(layers: readonly DevnetSettings[], defaultChainId: number | undefined): ResolvedDevnetSettings {
  const merged = Object.assign({}, ...layers) as DevnetSettings;
  const anvil: Record<string, unknown> = { order: 'fifo', chainId: defaultChainId };
  for (const layer of layers) Object.assign(anvil, layer.anvil);
  for (const key of ANVIL_KEYS) if (merged[key] !== undefined) anvil[key] = merged[key];
  return {
    anvil: anvil as AnvilOptions,
    seed: merged.seed === false ? false : { bulkLogs: merged.bulkLogs ?? 0 },
    signers: merged.signers,
  };
}
