import { Errors, GatewayError, step, type RequestContext, type StageDefinition, keyOf } from '../../../core/plugin-api.js';
import { SecretVerifier } from '../../../core/transport-api.js';
import { isIpfsNetwork } from '../family.js';
import type { ResolvedIpfsSettings } from '../settings.js';
import { secretCheckOf } from '../secret-check.js';
import type { SecretGuard } from '../secret-guard.js';

/** The stage's name; it runs right after `authenticate`. */
export const CREDENTIALS_STAGE = 'ipfsCredentials';

/** The refusal of a file-storage call's credentials: the same whether the key or the secret is wrong. */
export function refuseCredentials(): GatewayError {
  return new GatewayError(Errors.UNAUTHORIZED, { message: 'invalid API key or secret' });
}

/**
 * Checks the secret of a file-storage call against the key's `secretHash` (scrypt, constant-time
 * comparison). A key without a secret cannot use the API. A verified secret is remembered for
 * `secretCacheMs` (see {@link SecretVerifier}), so scrypt runs once per client rather than once per
 * request; failed checks are rate-limited per key, since each costs a scrypt run, and every check that
 * needs scrypt takes from the refusal budget (see {@link SecretGuard}). Calls to other networks pass
 * untouched.
 */
export function credentialsStage(settings: ResolvedIpfsSettings, guard: SecretGuard): StageDefinition {
  return {
    name: CREDENTIALS_STAGE,
    after: 'authenticate',
    create({ limiter, clock, container }) {
      const verifier = new SecretVerifier({ cacheMs: settings.secretCacheMs, clock, verify: secretCheckOf(container, guard.worker) });

      const failed = async (ctx: RequestContext): Promise<never> => {
        const rate = settings.secretFailuresPerSecond;
        const decision = await limiter.take(`ipfs-secret-failures:${keyOf(ctx).id}`, 1, rate, Math.max(1, rate), clock.now());
        if (!decision.ok) {
          const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
          throw new GatewayError(Errors.RATE_LIMITED, { message: 'too many failed secret checks for this key', headers: { 'retry-after': String(seconds) } });
        }
        throw refuseCredentials();
      };

      return step((ctx) => {
        if (!isIpfsNetwork(ctx.network)) return;
        const secret = ctx.credentials.secret;
        const secretHash = ctx.key?.secretHash;
        if (secret === undefined || secret === '' || secretHash === undefined) throw refuseCredentials();
        const scope = ctx.credentials.apiKey ?? '';
        if (!verifier.remembers(scope, secret, secretHash)) {
          const refused = guard.take(ctx.meta.remoteAddress, clock);
          if (refused !== undefined) return refused;
        }
        const verified = verifier.verify(scope, secret, secretHash);
        if (verified === true) return;
        return verified.then((ok) => (ok ? undefined : failed(ctx)));
      });
    },
  };
}
