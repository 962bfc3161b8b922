/**
 * The security stage: network toggles, the key secret, JWT, and the allowlists, for every call of a key
 * that has security settings.
 *
 * @module
 */
import { Errors, GatewayError, step, type RequestContext, type StageDefinition, keyOf } from '../../core/plugin-api.js';
import { SecretVerifier } from '../../core/transport-api.js';
import { refusalOf } from './allowlist-rules.js';
import { JwtVerifier } from './jwt.js';
import { bearerTokenOf, keySecretOf } from './key-secret.js';
import { refusalError, type Refusal } from './refusal.js';
import type { CompiledSecurity } from './settings.js';

/** The stage's name in the pipeline. */
export const SECURITY_STAGE = 'security';

/** How long a verified key secret is remembered (ms), so scrypt runs once per client, not per call. */
export const SECRET_CACHE_MS = 60_000;

/** Failed secret checks allowed per key and second (each costs a scrypt run). */
export const SECRET_FAILURES_PER_SECOND = 5;

/** Finds a key's prepared settings: undefined when the key has none. */
export type SecurityLookup = (ctx: RequestContext) => CompiledSecurity | undefined;

const SECRET_FIX = 'send the key secret as HTTP basic auth with an empty user (curl -u :<secret>; Authorization: Basic base64(":<secret>"))';

/**
 * The security stage: refuses, with `FORBIDDEN` (code -33100, HTTP 403), a call that its key's settings
 * do not allow, naming the setting and the fix. Checks, in order: the network toggle, the key secret
 * (when required, or when sent: a wrong secret is never ignored), the JWT (when required, or when sent),
 * the JWT's narrowing claims, then the key's allowlists (skipped for a call with the right secret when
 * the key allows it). It sits right before `meter`, so a refused call costs nothing.
 */
export function securityStage(lookup: SecurityLookup): StageDefinition {
  return {
    name: SECURITY_STAGE,
    before: 'meter',
    create({ clock, limiter }) {
      const secrets = new SecretVerifier({ cacheMs: SECRET_CACHE_MS, clock });
      const jwts = new JwtVerifier(() => clock.now());

      const wrongSecret = async (ctx: RequestContext): Promise<never> => {
        const decision = await limiter.take(`security-secret-failures:${keyOf(ctx).id}`, 1, SECRET_FAILURES_PER_SECOND, SECRET_FAILURES_PER_SECOND, clock.now());
        if (!decision.ok) {
          const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
          throw new GatewayError(Errors.RATE_LIMITED, { message: 'too many failed key secret checks for this key', headers: { 'retry-after': String(seconds) } });
        }
        throw refusalError({ setting: 'requireSecret', reason: 'key secret does not match', fix: `${SECRET_FIX}, with the secret issued with the key (rotate the key for a new one)` });
      };

      /** Whether the call carries the key's right secret; throws when it carries a wrong one, or none when one is required. */
      const secretOf = (ctx: RequestContext, requireSecret: boolean): boolean | Promise<boolean> => {
        const secret = keySecretOf(ctx);
        if (secret === undefined) {
          if (requireSecret) throw refusalError({ setting: 'requireSecret', reason: 'key secret required', fix: SECRET_FIX });
          return false;
        }
        const secretHash = keyOf(ctx).secretHash;
        if (secretHash === undefined) {
          throw refusalError({ setting: 'requireSecret', reason: 'the key has no secret', fix: 'rotate the key to get a secret, or turn requireSecret off' });
        }
        const verified = secrets.verify(keyOf(ctx).id, secret, secretHash);
        return verified === true ? true : verified.then((ok) => ok || wrongSecret(ctx));
      };

      const allowlists = (ctx: RequestContext, settings: CompiledSecurity, withSecret: boolean): void => {
        if (!settings.hasLists || (withSecret && settings.secretSkipsAllowlists)) return;
        const refusal = refusalOf(settings.lists, { method: ctx.call.method, params: ctx.params, meta: ctx.meta });
        if (refusal !== undefined) throw refusalError(refusal);
      };

      const jwt = async (ctx: RequestContext, settings: CompiledSecurity): Promise<void> => {
        const token = bearerTokenOf(ctx);
        if (token === undefined) {
          if (settings.jwt!.required !== false) {
            throw refusalError({ setting: 'jwt', reason: 'JWT required', fix: "send Authorization: Bearer <JWT>, signed with the private key of one of the key's JWT public keys" });
          }
          return;
        }
        const verified = await jwts.verify(token, settings.jwt!);
        if ('reason' in verified) throw refusalError(verified);
        const narrowed: Refusal | undefined = refusalOf(verified.claims, { method: ctx.call.method, params: ctx.params, meta: ctx.meta }, 'jwt');
        if (narrowed !== undefined) throw refusalError(narrowed);
      };

      return step((ctx) => {
        const settings = ctx.key === undefined ? undefined : lookup(ctx);
        if (settings === undefined) {
          // A key without security settings still has its secret checked when a call sends one: a wrong
          // secret is never ignored. A transport's own secret (the file API's) is checked by its transport's stage.
          if (ctx.key === undefined || (ctx.credentials.secret !== undefined && ctx.credentials.secret !== '') || keySecretOf(ctx) === undefined) return;
          const checked = secretOf(ctx, false);
          return typeof checked === 'boolean' ? undefined : checked.then(() => undefined);
        }
        if (settings.disabledNetworks.has(ctx.network.name)) {
          throw refusalError({
            setting: 'networks',
            reason: `network disabled for this key: ${ctx.network.name}`,
            fix: `turn the network on in the key's security settings (networks: { "${ctx.network.name}": true }), or call a network the key has on`,
          });
        }
        const withSecret = secretOf(ctx, settings.requireSecret);
        const rest = (secretOk: boolean): void | Promise<void> => {
          if (settings.jwt === undefined) return allowlists(ctx, settings, secretOk);
          return jwt(ctx, settings).then(() => allowlists(ctx, settings, secretOk));
        };
        return typeof withSecret === 'boolean' ? rest(withSecret) : withSecret.then(rest);
      });
    },
  };
}
