/**
 * The allowlist plugin: per-key lists of allowed methods, Origins, User-Agents and contract addresses,
 * enforced by a pipeline stage that runs before `meter`, so a refused call costs no credits.
 *
 * @module
 */
import { Errors, GatewayError, Tokens, step, type StageDefinition, type TollgatePlugin } from 'tollgate';
import { refusalOf } from './allowlist-rules.js';
import { ALLOWLIST_PLUGIN, readAllowlistSettings, resolveAllowlists, type AllowlistSettings, type CompiledAllowlist } from './allowlist-settings.js';

/** The stage's name in the pipeline. */
export const ALLOWLIST_STAGE = 'allowlist';

/**
 * The allowlist stage: refuses a call its key's lists do not allow with `FORBIDDEN` (code -33100, HTTP
 * 403) and a message naming the list. It sits right before `meter`: after `authenticate` (it needs the
 * key's id) and `validate` (it reads validated params), and before anything is charged or counted
 * against the key's throughput.
 */
export function allowlistStage(allowlists: ReadonlyMap<string, CompiledAllowlist>): StageDefinition {
  return {
    name: ALLOWLIST_STAGE,
    before: 'meter',
    create: () =>
      step((ctx) => {
        const id = ctx.key?.id;
        const lists = id === undefined ? undefined : allowlists.get(id);
        if (lists === undefined) return;
        const refusal = refusalOf(lists, { method: ctx.call.method, params: ctx.params, meta: ctx.meta });
        if (refusal !== undefined) throw new GatewayError(Errors.FORBIDDEN, { message: refusal });
      }),
  };
}

/**
 * The allowlist plugin. `options` hold defaults; the config's `plugins.allowlist` section wins, key by
 * key (a key's entry there replaces its entry from `options`).
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: {
 *     keys: [{ key: 'my-api-key-0001', id: 'acme', plan: 'growth' }],
 *     networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }],
 *     plugins: { allowlist: { keys: { acme: { origins: ['https://*.acme.com'], methods: ['eth_call', 'eth_blockNumber'] } } } },
 *   },
 *   plugins: [httpTransport(), evmFamily(), allowlist()],
 * });
 * ```
 */
export function allowlist(options: AllowlistSettings = {}): TollgatePlugin {
  const code = readAllowlistSettings('allowlist()', options as Readonly<Record<string, unknown>>);
  return {
    name: ALLOWLIST_PLUGIN,
    register(container, config) {
      const fromConfig = readAllowlistSettings(`plugins.${ALLOWLIST_PLUGIN}`, config.plugins[ALLOWLIST_PLUGIN]);
      container.register(Tokens.Stage, { useValue: allowlistStage(resolveAllowlists([code, fromConfig])) });
    },
  };
}
