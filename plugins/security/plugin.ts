/**
 * The security plugin: per-key allowlists (methods, origins, user agents, contract addresses), an
 * optional key secret, network toggles and JWT, enforced by a pipeline stage that runs before `meter`, so
 * a refused call costs no credits.
 *
 * @module
 */
import { loadJose } from './peers.js';
import { ConfigError, KeySettingsSectionToken, Tokens, type KeySettingsSection, type RequestContext, type TollgatePlugin, keyOf } from '../../core/plugin-api.js';
import { refusalError } from './refusal.js';
import { securityStage } from './security-stage.js';
import { SECURITY_PLUGIN, compileSecurity, keySecurityProblems, securitySettingsProblems, type CompiledSecurity, type KeySecurity, type SecuritySettings } from './settings.js';

const MAX_COMPILED = 10_000;

/** The `security` section of a key's settings and its check, for whatever stores settings (admin API, CLI). */
export const SECURITY_SECTION: KeySettingsSection = Object.freeze({ name: SECURITY_PLUGIN, check: keySecurityProblems });

/**
 * Finds each call's settings: the key's own `settings.security`, else its entry in the plugin's layers.
 * Prepared settings are remembered by the settings object (a key store that keeps records) and by their
 * JSON (one that reads them afresh), so matching structures are built once per change, not per call.
 */
class SecurityDirectory {
  readonly #layered: ReadonlyMap<string, CompiledSecurity>;
  readonly #byObject = new WeakMap<object, CompiledSecurity | null>();
  readonly #byJson = new Map<string, CompiledSecurity | null>();

  constructor(layered: ReadonlyMap<string, CompiledSecurity>) {
    this.#layered = layered;
  }

  lookup(ctx: RequestContext): CompiledSecurity | undefined {
    const own: unknown = ctx.key?.settings?.[SECURITY_PLUGIN];
    if (own === undefined) return this.#layered.get(keyOf(ctx).id);
    if (typeof own !== 'object' || own === null) return this.#broken();
    const known = this.#byObject.get(own);
    if (known !== undefined) return known ?? this.#broken();
    const json = JSON.stringify(own);
    let compiled = this.#byJson.get(json);
    if (compiled === undefined) {
      compiled = keySecurityProblems(own, 'settings.security').length === 0 ? compileSecurity(own as KeySecurity) : null;
      if (this.#byJson.size >= MAX_COMPILED) this.#byJson.clear();
      this.#byJson.set(json, compiled);
    }
    this.#byObject.set(own, compiled);
    return compiled ?? this.#broken();
  }

  /** Settings stored without the admin API's check (a hand-edited store) refuse every call rather than being ignored. */
  #broken(): never {
    throw brokenSettings();
  }
}

function brokenSettings(): Error {
  return refusalError({ setting: 'security', reason: "the key's security settings are invalid", fix: "set them again through the admin API or the CLI, which say what is wrong" });
}

/**
 * The security plugin. A key's settings live in its `settings.security` (the admin API's
 * `PUT /admin/v1/keys/<id>/settings/security`, the CLI's `keys security`, the dashboard, or a config
 * key's `settings`); `options` and the config's `plugins.security.keys` give settings by key id to keys
 * without their own (the config's entry for a key replaces the code's).
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: {
 *     keys: [{ key: 'my-api-key-0001', id: 'acme', plan: 'growth', settings: { security: { origins: ['https://*.acme.com'] } } }],
 *     networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }],
 *   },
 *   plugins: [httpTransport(), evmFamily(), security()],
 * });
 * ```
 */
export function security(options: SecuritySettings = {}): TollgatePlugin {
  const problems = securitySettingsProblems('security()', options as Readonly<Record<string, unknown>>);
  if (problems.length > 0) throw new ConfigError(problems);
  let takesJwts = false;
  return {
    name: SECURITY_PLUGIN,
    register(container, config) {
      const fromConfig = config.plugins[SECURITY_PLUGIN];
      const found = securitySettingsProblems(`plugins.${SECURITY_PLUGIN}`, fromConfig);
      config.keys.forEach((key, i) => {
        const own = key.settings?.[SECURITY_PLUGIN];
        if (own !== undefined) found.push(...keySecurityProblems(own, `keys[${i}].settings.${SECURITY_PLUGIN}`));
      });
      if (found.length > 0) throw new ConfigError(found);
      const entries: Record<string, KeySecurity> = { ...options.keys, ...(fromConfig as SecuritySettings | undefined)?.keys };
      takesJwts = Object.values(entries).some((entry) => entry.jwt !== undefined)
        || config.keys.some((key) => (key.settings?.[SECURITY_PLUGIN] as KeySecurity | undefined)?.jwt !== undefined);
      const layered = new Map(Object.entries(entries).map(([id, entry]) => [id, compileSecurity(entry)]));
      const directory = new SecurityDirectory(layered);
      container.register(Tokens.Stage, { useValue: securityStage((ctx) => directory.lookup(ctx)) });
      container.register(KeySettingsSectionToken, { useValue: SECURITY_SECTION });
    },
    // A configured key that takes JWTs needs `jose` from its first call: a missing one is said at start.
    // Keys given JWT settings later (managed keys) load it on their first token.
    async start() {
      if (takesJwts) await loadJose();
    },
  };
}
