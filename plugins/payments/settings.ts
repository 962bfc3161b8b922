import { validateSettings } from '../../core/plugin-api.js';

/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const PAYMENTS_PLUGIN = 'payments';

/** One credit bundle a plan sells for x402: what it costs, in what, where, paid to whom. */
export interface BundleOffer {
  /** Credits the bundle adds to the key that buys it. */
  readonly credits: number;
  /** Its price in the asset's atomic units, as a decimal string (`"1000000"` is 1 USDC: 6 decimals). */
  readonly price: string;
  /** The token's contract address (an EIP-3009 token such as USDC). */
  readonly asset: string;
  /** The chain, as CAIP-2: `eip155:<chainId>` (`eip155:8453` is Base). */
  readonly network: string;
  /** The operator's address that receives the payment. */
  readonly payTo: string;
  /** The token's EIP-712 domain name (`USD Coin` for USDC on Base): payers sign over it. */
  readonly name: string;
  /** The token's EIP-712 domain version (`2` for USDC). */
  readonly version: string;
  /** How long a signed payment stays valid, in seconds (default 300). */
  readonly maxTimeoutSeconds?: number;
}

/** A facilitator reached over HTTP, as the hosted ones are (`POST <url>/verify`, `POST <url>/settle`). */
export interface UrlFacilitatorSettings {
  /** Its base URL, e.g. `https://x402.org/facilitator`. */
  readonly url: string;
  /** Per-request timeout in ms (default 30,000). A settle that times out may still have settled. */
  readonly timeoutMs?: number;
}

/**
 * The embedded facilitator: `@x402/evm`'s exact scheme, settling with the operator's own key. Its
 * transactions go through exactly one of `rpcUrl` or `network`.
 */
export interface EmbeddedFacilitatorSettings {
  /** The EVM JSON-RPC URL its transactions are sent through. */
  readonly rpcUrl?: string;
  /**
   * Instead of `rpcUrl`: one of the gateway's own EVM networks, by name: its reads and transactions go to
   * that network's upstreams (uncharged, with its failover), as `NetworkRuntime.rpc` sends them.
   */
  readonly network?: string;
  /**
   * The private key (0x and 64 hex digits) that signs and pays the gas of settlement transactions. Give
   * it from the environment (`${X402_SETTLEMENT_KEY}`), never in the file.
   */
  readonly settlementKey: string;
  /** How long a settlement waits for its receipt, in ms (default 60,000). */
  readonly confirmationTimeoutMs?: number;
}

/**
 * Wallet customers: a call without an API key is offered `plan`'s bundles, and one that pays gets a key
 * on `plan` bound to the payer's address (in the `x-tollgate-key` response header). The key is derived
 * from the address and `keySecret`, so a wallet has one key, and paying again without it returns it again.
 */
export interface WalletSettings {
  /** The plan of wallet keys; it must sell at least one bundle (see {@link PaymentsSettings.offers}). */
  readonly plan: string;
  /**
   * The secret wallet keys are derived from (HMAC-SHA256 of the payer's address), at least 32
   * characters. Give it from the environment (`${X402_WALLET_SECRET}`); every instance of a fleet needs
   * the same. Changing it gives every wallet a new key on its next payment without one, and leaves the
   * old keys working.
   */
  readonly keySecret: string;
}

/** Settings of the payments plugin (`plugins.payments` in the config; the config wins over code). */
export interface PaymentsSettings {
  /** Bundles on sale, by plan name. A plan not named here sells nothing. */
  readonly offers?: Readonly<Record<string, readonly BundleOffer[]>>;
  /** Who verifies and settles payments: exactly one of `url` or `embedded`. */
  readonly facilitator?: FacilitatorChoice;
  /**
   * Where the payment journal is kept (default: the store the gateway loaded, so instances sharing a
   * store share the journal: `sqlite` with the SQLite store, `redis` with the Redis store, else `memory`).
   */
  readonly journal?: JournalStore;
  /** Wallet customers (off when absent): keys for wallets that pay without one. Needs a store that keeps keys. */
  readonly wallets?: WalletSettings;
}

/** Where the payment journal is kept. */
export type JournalStore = 'memory' | 'sqlite' | 'redis';

/** The facilitator, as settings give it: exactly one member. */
export interface FacilitatorChoice {
  /** A facilitator by URL. */
  readonly url?: UrlFacilitatorSettings;
  /** The embedded facilitator. */
  readonly embedded?: EmbeddedFacilitatorSettings;
}

/** The facilitator by URL, resolved. */
export interface ResolvedUrlFacilitator extends Required<UrlFacilitatorSettings> {
  /** Discriminant. */
  readonly kind: 'url';
}

/** The embedded facilitator, resolved: exactly one of `rpcUrl` or `network` is set. */
export interface ResolvedEmbeddedFacilitator extends EmbeddedFacilitatorSettings {
  /** Discriminant. */
  readonly kind: 'embedded';
  /** See {@link EmbeddedFacilitatorSettings.settlementKey}. */
  readonly settlementKey: string;
  /** See {@link EmbeddedFacilitatorSettings.confirmationTimeoutMs}. */
  readonly confirmationTimeoutMs: number;
}

/** Settings with every default applied. */
export interface ResolvedPaymentsSettings {
  /** See {@link PaymentsSettings.offers}; each offer with its `maxTimeoutSeconds`. */
  readonly offers: Readonly<Record<string, ReadonlyArray<Required<BundleOffer>>>>;
  /** See {@link PaymentsSettings.facilitator}. */
  readonly facilitator: ResolvedUrlFacilitator | ResolvedEmbeddedFacilitator;
  /** See {@link PaymentsSettings.journal}; absent: the store the gateway loaded. */
  readonly journal?: JournalStore;
  /** See {@link PaymentsSettings.wallets}. */
  readonly wallets?: WalletSettings;
}

const address = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$', problem: 'must be a 20-byte hex address (0x and 40 hex digits)' } as const;
const positiveInteger = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, problem: 'must be a positive integer' } as const;
const text = { type: 'string', minLength: 1, problem: 'must be a non-empty string' } as const;

const OFFER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['credits', 'price', 'asset', 'network', 'payTo', 'name', 'version'],
  properties: {
    credits: positiveInteger,
    price: { type: 'string', pattern: '^[1-9][0-9]*$', problem: 'must be a positive amount in atomic units, as a decimal string ("1000000")' },
    asset: address,
    network: { type: 'string', pattern: '^eip155:[1-9][0-9]*$', problem: 'must be a CAIP-2 EVM network: eip155:<chainId>' },
    payTo: address,
    name: text,
    version: text,
    maxTimeoutSeconds: { ...positiveInteger, default: 300 },
  },
} as const;

/** The settings' schema: unknown or bad fields are refused by name, in the gateway's configuration format. */
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    offers: { type: 'object', additionalProperties: { type: 'array', items: OFFER_SCHEMA, problem: 'must be a list of bundles' }, default: {} },
    journal: { type: 'string', enum: ['memory', 'sqlite', 'redis'], problem: 'must be memory, sqlite or redis' },
    facilitator: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      problem: { minProperties: 'needs one of url or embedded', maxProperties: 'takes one of url or embedded, not both' },
      properties: {
        url: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: { url: { type: 'string', pattern: '^https?://', problem: 'must be an http(s) URL' }, timeoutMs: { ...positiveInteger, default: 30_000 } },
        },
        embedded: {
          type: 'object',
          additionalProperties: false,
          required: ['settlementKey'],
          properties: {
            rpcUrl: { type: 'string', pattern: '^https?://', problem: 'must be an http(s) URL' },
            network: text,
            settlementKey: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$', problem: 'must be a private key: 0x and 64 hex digits' },
            confirmationTimeoutMs: { ...positiveInteger, default: 60_000 },
          },
        },
      },
    },
    wallets: {
      type: 'object',
      additionalProperties: false,
      required: ['plan', 'keySecret'],
      properties: {
        plan: text,
        keySecret: { type: 'string', minLength: 32, problem: 'must be a secret of at least 32 characters (give it from the environment: ${X402_WALLET_SECRET})' },
      },
    },
  },
  required: ['facilitator'],
  problem: { required: 'needs a facilitator: { url: {...} } or { embedded: {...} }' },
} as const;

interface Validated {
  offers: Record<string, Required<BundleOffer>[]>;
  journal?: JournalStore;
  facilitator: { url?: { url: string; timeoutMs: number }; embedded?: { rpcUrl?: string; network?: string; settlementKey: string; confirmationTimeoutMs: number } };
  wallets?: WalletSettings;
}

/** What the schema cannot say: the embedded facilitator's one road to the chain, and a wallet plan that sells. */
function crossChecks({ offers, facilitator, wallets }: Validated): string[] {
  const problems: string[] = [];
  const embedded = facilitator.embedded;
  if (embedded !== undefined && (embedded.rpcUrl === undefined) === (embedded.network === undefined)) {
    problems.push('facilitator.embedded: needs exactly one of rpcUrl (a URL) or network (one of the gateway\'s EVM networks, by name)');
  }
  if (wallets !== undefined && (offers[wallets.plan]?.length ?? 0) === 0) {
    problems.push(`wallets.plan: plan "${wallets.plan}" sells no bundle (add it under offers), so a wallet without a key could buy nothing`);
  }
  return problems;
}

/**
 * Checks settings from code or config (`where` names them in errors) and applies defaults; later sources
 * win over earlier ones.
 *
 * @throws ConfigError naming each offending field.
 */
export function resolvePaymentsSettings(sources: ReadonlyArray<object | undefined>, where = `plugins.${PAYMENTS_PLUGIN}`): ResolvedPaymentsSettings {
  const { offers, facilitator, wallets, journal } = validateSettings<Validated>(SETTINGS_SCHEMA, sources, where, crossChecks);
  const chosen = facilitator.url !== undefined
    ? { kind: 'url' as const, ...facilitator.url }
    : { kind: 'embedded' as const, ...(facilitator.embedded as NonNullable<Validated['facilitator']['embedded']>) };
  return { offers, facilitator: chosen, ...(wallets === undefined ? {} : { wallets }), ...(journal === undefined ? {} : { journal }) };
}
