import { validateSettings, type SettingsSchema } from 'tollgate/plugin';
import type { AnvilOptions } from './anvil-process.js';
import type { BorSignerInput } from './bor-validators.js';
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
  /** Deploy the test stablecoin (EIP-3009) and fund the demo x402 payer while seeding (default false). */
  readonly stablecoin?: boolean;
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

const SAFE = Number.MAX_SAFE_INTEGER;
const positiveInteger = { type: 'integer', minimum: 1, maximum: SAFE, problem: 'must be a positive integer' } as const;
const nonNegativeInteger = { type: 'integer', minimum: 0, maximum: SAFE, problem: 'must be a non-negative integer' } as const;
const positiveNumber = { type: 'number', exclusiveMinimum: 0, problem: 'must be a positive number' } as const;
const nonEmptyString = { type: 'string', pattern: '\\S', problem: 'must be a non-empty string' } as const;
const boolean = { type: 'boolean', problem: 'must be true or false' } as const;
// Code may give a bigint; it is checked as its decimal string (see checkDevnetLayer).
const bigQuantity = {
  anyOf: [{ type: 'integer', minimum: 1, maximum: SAFE }, { type: 'string', pattern: '^(0x[0-9a-fA-F]+|[0-9]*[1-9][0-9]*)$' }],
  problem: 'must be a positive integer (a number, or a decimal or 0x string)',
} as const;
const address = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$', problem: 'must be a 20-byte hex address (0x and 40 hex digits)' } as const;
const integer = { type: 'integer', problem: 'must be an integer' } as const;

/** The Anvil (and bor) settings of a layer. */
const ANVIL_PROPERTIES = {
  chainId: positiveInteger,
  blockTime: positiveNumber,
  accounts: positiveInteger,
  mnemonic: nonEmptyString,
  balance: positiveNumber,
  gasLimit: bigQuantity,
  baseFee: bigQuantity,
  hardfork: nonEmptyString,
  seed: boolean,
  bulkLogs: nonNegativeInteger,
  stablecoin: boolean,
  signers: {
    type: 'array',
    items: { anyOf: [address, { type: 'object', additionalProperties: false, required: ['signer'], properties: { signer: address, power: integer, accum: integer, ID: integer } }] },
    problem: 'must be an array of addresses or {signer, power?, accum?, ID?} objects',
  },
} as const;

/** The `litesvm` settings of a layer. */
export const LITESVM_PROPERTIES = {
  slotMs: nonNegativeInteger,
  startSlot: { anyOf: [{ type: 'integer', minimum: 0, maximum: SAFE }, { type: 'string', pattern: '^[0-9]+$' }], problem: 'must be a non-negative integer' },
  confirmedLag: nonNegativeInteger,
  finalizedLag: nonNegativeInteger,
  version: { type: 'string', minLength: 1, problem: 'must be a non-empty string' },
  identitySeed: { type: 'string', minLength: 1, problem: 'must be a non-empty string' },
  seed: boolean,
} as const;

/** The `helia` member of a layer. */
export const HELIA_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { dataDir: { type: 'string', minLength: 1, problem: 'must be a non-empty path' }, objectGet: boolean },
  problem: { type: 'must be an object' },
} as const;

/** The config's `plugins.devnet`: every provider's settings, and nothing else. */
export const DEVNET_SECTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { ...ANVIL_PROPERTIES, ...LITESVM_PROPERTIES, helia: HELIA_SCHEMA },
} as const;

/** `devnet({...})`: Anvil's settings at the top, `litesvm` and `helia` in their own members, `anvil` (code only) as given. */
export const DEVNET_OPTIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...ANVIL_PROPERTIES,
    anvil: { type: 'object', problem: 'must be an object of Anvil options' },
    litesvm: { type: 'object', additionalProperties: false, properties: LITESVM_PROPERTIES, problem: { type: 'must be an object' } },
    helia: HELIA_SCHEMA,
  },
} as const;

/** A network's `options`: the devnet's keys are checked, the others belong to the network's families. */
export const NETWORK_OPTIONS_SCHEMA = {
  type: 'object',
  properties: { ...ANVIL_PROPERTIES, ...LITESVM_PROPERTIES, helia: HELIA_SCHEMA },
} as const;

const ANVIL_SETTING_KEYS = Object.keys(ANVIL_PROPERTIES) as ReadonlyArray<keyof typeof ANVIL_PROPERTIES>;

/** `value` as JSON would carry it: bigints (which code may give) as their decimal strings. */
function jsonView(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(jsonView);
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, jsonView(member)]));
  }
  return value;
}

/**
 * Checks one layer of settings against `schema` with Tollgate's settings validator (`validateSettings`:
 * its error format, every problem at once) and returns the layer as given.
 *
 * @throws ConfigError naming each offending field under `where` (`plugins.devnet.chainId: must be a positive integer`).
 */
export function checkDevnetLayer(schema: SettingsSchema, where: string, source: object | undefined): Readonly<Record<string, unknown>> {
  if (source === undefined) return {};
  validateSettings(schema, [jsonView(source) as object], where);
  return source as Readonly<Record<string, unknown>>;
}

/**
 * Picks the Anvil (and bor) settings of a layer (a config's `plugins.devnet`, a network's `options`),
 * checked against `schema` (default: the network options' schema, which leaves other keys alone); a
 * `gasLimit` or `baseFee` given as a string becomes a bigint.
 *
 * @throws ConfigError naming each offending field under `where`.
 */
export function readDevnetSettings(where: string, source: object | undefined, schema: SettingsSchema = NETWORK_OPTIONS_SCHEMA): DevnetSettings {
  const layer = checkDevnetLayer(schema, where, source);
  const out: Record<string, unknown> = {};
  for (const key of ANVIL_SETTING_KEYS) {
    const value = layer[key];
    if (value === undefined) continue;
    out[key] = (key === 'gasLimit' || key === 'baseFee') && typeof value === 'string' ? BigInt(value) : value;
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
    seed: merged.seed === false ? false : { bulkLogs: merged.bulkLogs ?? 0, stablecoin: merged.stablecoin ?? false },
    signers: merged.signers,
  };
}
