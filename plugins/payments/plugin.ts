import type { DependencyContainer, InjectionToken } from '../../core/plugin-api.js';
import type { GatewayRuntime } from '../../core/transport-api.js';
import { PluginError, Tokens, TopUpsToken, type TollgatePlugin } from '../../core/plugin-api.js';
import { KeyRegistryToken, type KeyRegistry } from '../../core/store-api.js';
import { embeddedFacilitator } from './embedded-facilitator.js';
import type { PaymentFacilitator } from './facilitator.js';
import { MemoryPaymentJournal } from './memory-payment-journal.js';
import { OfferBook } from './offers.js';
import { LedgerPaidCredits, type PaidCredits } from './paid-credits.js';
import { PaymentDesk } from './payment-desk.js';
import { x402TopUps, type RequestPayments } from './x402-top-ups.js';
import type { PaymentJournal } from './payment-journal.js';
import { RedisPaymentJournal, type JournalRedis } from './redis-payment-journal.js';
import { SqlitePaymentJournal, type JournalDatabase } from './sqlite-payment-journal.js';
import { PAYMENTS_PLUGIN, resolvePaymentsSettings, type JournalStore, type PaymentsSettings, type ResolvedPaymentsSettings } from './settings.js';
import { urlFacilitator } from './url-facilitator.js';
import type { Network } from './x402-types.js';
import { walletStage } from './wallet-customers.js';

/** The container token of the started plugin's {@link PaymentDesk}. */
export const PaymentDeskToken = Symbol.for('tollgate.payments.PaymentDesk') as InjectionToken<PaymentDesk>;

/**
 * The container token of the payment journal the started plugin uses: the admin API lists payments
 * through it (`Symbol.for`, so a plugin finds it without importing this one and its peers).
 */
export const PaymentJournalToken = Symbol.for('tollgate.payments.PaymentJournal') as InjectionToken<PaymentJournal>;

// The store plugins register their connections under these (ledger-sqlite's `SqliteDatabaseToken`,
// ledger-redis's `RedisConnectionToken`): the default journal lives in the store the gateway loaded.
const SQLITE_DATABASE = Symbol.for('tollgate.ledger-sqlite.Database') as InjectionToken<JournalDatabase>;
const REDIS_CONNECTION = Symbol.for('tollgate.ledger-redis.Connection') as InjectionToken<JournalRedis>;

/** The journal `choice` names (undefined: the store the gateway loaded). */
function journalOf(choice: JournalStore | undefined, container: DependencyContainer): PaymentJournal {
  const sqlite = container.isRegistered(SQLITE_DATABASE, true);
  const redis = container.isRegistered(REDIS_CONNECTION, true);
  const store = choice ?? (redis ? 'redis' : sqlite ? 'sqlite' : 'memory');
  if (store === 'sqlite') {
    if (!sqlite) throw new Error(`plugins.${PAYMENTS_PLUGIN}.journal: sqlite needs the SQLite store (plugins.ledger-sqlite) in the gateway`);
    return new SqlitePaymentJournal(container.resolve(SQLITE_DATABASE));
  }
  if (store === 'redis') {
    if (!redis) throw new Error(`plugins.${PAYMENTS_PLUGIN}.journal: redis needs the Redis store (plugins.ledger-redis) in the gateway`);
    return new RedisPaymentJournal(container.resolve(REDIS_CONNECTION));
  }
  return new MemoryPaymentJournal();
}

/** `payments({...})`: the settings, and parts given in code only. */
export interface PaymentsOptions extends Omit<PaymentsSettings, 'journal'> {
  /** The journal: where to keep it (see {@link PaymentsSettings.journal}), or one made in code. */
  readonly journal?: JournalStore | PaymentJournal;
  /**
   * Where bought credits go (default: the gateway's credit ledger, `Tokens.CreditLedger`, resolved at
   * start, so list the store plugin before this one).
   */
  readonly credits?: PaidCredits;
}

/** The payments plugin, with its desk once started. */
export interface PaymentsPlugin extends TollgatePlugin {
  /**
   * The started desk.
   *
   * @throws Error before the plugin's gateway started it.
   */
  readonly desk: PaymentDesk;
}

function facilitatorOf(settings: ResolvedPaymentsSettings, gateway: GatewayRuntime): PaymentFacilitator {
  const { facilitator } = settings;
  if (facilitator.kind === 'url') return urlFacilitator({ url: facilitator.url, timeoutMs: facilitator.timeoutMs });
  const networks = [...new Set(Object.values(settings.offers).flatMap((list) => list.map((offer) => offer.network as Network)))];
  const name = facilitator.network;
  // Through one of the gateway's networks: looked up per call, since the networks are built after the
  // plugins start, and a reload may rebuild them.
  const road = name === undefined
    ? { rpcUrl: facilitator.rpcUrl as string }
    : {
        request: (method: string, params: readonly unknown[]): Promise<unknown> => {
          const network = gateway.networks.get(name);
          if (network === undefined) return Promise.reject(new Error(`${PAYMENTS_PLUGIN}: the facilitator's network "${name}" is not served`));
          return network.rpc(method, params);
        },
      };
  return embeddedFacilitator({
    ...road,
    settlementKey: facilitator.settlementKey as `0x${string}`,
    networks,
    confirmationTimeoutMs: facilitator.confirmationTimeoutMs,
  });
}

/**
 * x402 payments that buy credit bundles: the offers by plan, a facilitator (by URL or embedded), the
 * payment journal, and the desk that takes a payment exactly once. On start it credits what the journal
 * holds as settled and not credited. A key whose plan sells bundles gets them offered on its 402
 * (`PAYMENT-REQUIRED`, `error.data.x402`), and an HTTP request with `PAYMENT-SIGNATURE` pays before its
 * call is metered (see the README's "How a request pays"). Bought bundles go into the gateway's credit
 * ledger, as the key's paid balance.
 *
 * @example
 * ```ts
 * payments({
 *   offers: { pro: [{ credits: 100_000, price: '1000000', asset: USDC, network: 'eip155:8453', payTo, name: 'USD Coin', version: '2' }] },
 *   facilitator: { url: { url: 'https://x402.org/facilitator' } },
 * });
 * ```
 */
export function payments(options: PaymentsOptions = {}): PaymentsPlugin {
  const { journal: journalOption, credits, ...rest } = options;
  const journal = typeof journalOption === 'object' ? journalOption : undefined;
  const settingsPart: PaymentsSettings = typeof journalOption === 'string' ? { ...rest, journal: journalOption } : rest;
  let settings: ResolvedPaymentsSettings | undefined;
  let offers: OfferBook | undefined;
  let desk: PaymentDesk | undefined;
  let scope: DependencyContainer | undefined;
  const started = (): PaymentDesk => {
    if (desk === undefined) throw new Error('the payments plugin is not started in a gateway yet');
    return desk;
  };
  return {
    name: PAYMENTS_PLUGIN,
    get desk(): PaymentDesk {
      return started();
    },
    register(container, config) {
      scope = container;
      settings = resolvePaymentsSettings([settingsPart, config.plugins[PAYMENTS_PLUGIN]]);
      offers = new OfferBook(settings.offers);
      container.register(PaymentDeskToken, { useFactory: () => started() });
      container.register(PaymentJournalToken, { useFactory: () => started().journal });
      // One payment per HTTP request, whichever step takes it: a wallet's payment, taken before
      // authenticate, is the one meter's top-up finds for the request.
      const taken: RequestPayments = new WeakMap();
      // The 402 of a key whose plan sells bundles offers them; a request's payment is taken by meter,
      // right before it charges (after every other stage, whatever the plugins' order).
      container.register(TopUpsToken, { useValue: x402TopUps({ offers, desk: started, taken }) });
      const wallets = settings.wallets;
      if (wallets !== undefined) {
        let registry: KeyRegistry | undefined;
        const stage = walletStage({
          settings: wallets,
          desk: started,
          registry: () => (registry ??= container.resolve(KeyRegistryToken)),
          taken,
        });
        container.register(Tokens.Stage, { useValue: stage });
      }
    },
    async start(gateway) {
      const resolved = settings as ResolvedPaymentsSettings;
      const road = resolved.facilitator.kind === 'embedded' ? resolved.facilitator.network : undefined;
      if (road !== undefined && !gateway.config.networks.some((network) => network.name === road)) {
        throw new PluginError(`${PAYMENTS_PLUGIN}: facilitator.embedded.network "${road}" is not a network of the config`, { code: 'PLUGIN_START_FAILED', plugin: PAYMENTS_PLUGIN });
      }
      if (resolved.wallets !== undefined) {
        if (!gateway.container.isRegistered(KeyRegistryToken, true)) {
          throw new PluginError(`${PAYMENTS_PLUGIN}: wallets needs a store that keeps keys (a KeyRegistry: the ledger-sqlite or ledger-redis plugin), to give each paying wallet a key; this gateway knows only the config's keys`, { code: 'PLUGIN_START_FAILED', plugin: PAYMENTS_PLUGIN });
        }
        if (gateway.config.plans[resolved.wallets.plan] === undefined) {
          throw new PluginError(`${PAYMENTS_PLUGIN}: wallets.plan "${resolved.wallets.plan}" is not a plan of the config`, { code: 'PLUGIN_START_FAILED', plugin: PAYMENTS_PLUGIN });
        }
      }
      let chosen: PaymentJournal;
      try {
        chosen = journal ?? journalOf(resolved.journal, scope as DependencyContainer);
      } catch (error) {
        throw new PluginError(`${PAYMENTS_PLUGIN}: ${(error as Error).message}`, { code: 'PLUGIN_START_FAILED', plugin: PAYMENTS_PLUGIN, cause: error });
      }
      let paid: PaidCredits;
      try {
        paid = credits ?? new LedgerPaidCredits(gateway.container.resolve(Tokens.CreditLedger), () => gateway.clock.now());
      } catch (error) {
        throw new PluginError(`${PAYMENTS_PLUGIN}: the gateway's credit ledger is not open (list the store plugin before payments): ${(error as Error).message}`, { code: 'PLUGIN_START_FAILED', plugin: PAYMENTS_PLUGIN, cause: error });
      }
      desk = new PaymentDesk({ offers: offers as OfferBook, facilitator: facilitatorOf(resolved, gateway), journal: chosen, credits: paid });
      try {
        const recovered = await desk.recover();
        if (recovered.credited + recovered.failed + recovered.pending > 0) gateway.logger.info({ ...recovered }, 'payments: resolved payments a restart interrupted');
        if (recovered.pending > 0) gateway.logger.warn({ pending: recovered.pending }, 'payments: some interrupted payments could not be resolved yet (the chain could not be asked); they are resolved at the next start or when their header is sent again');
      } catch (error) {
        throw new PluginError(`${PAYMENTS_PLUGIN}: recovering settled payments failed: ${(error as Error).message}`, { code: 'PLUGIN_START_FAILED', plugin: PAYMENTS_PLUGIN, cause: error });
      }
    },
  };
}
